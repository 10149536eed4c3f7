// The openai npm package against belt serve (tests/serve-openai.sh): a
// non-streamed and a streamed chat completion, a completion, the models
// list, and a bad request as the client's own error class. Prints one
// line per check; exits 1 at the first that fails.
import OpenAI from "openai";
import assert from "node:assert/strict";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 30000 });
const messages = [
	{ role: "system", content: "You tell stories." },
	{ role: "user", content: "Tell me about a cat." },
];

const models = await client.models.list();
assert.equal(models.data[0].id, "stories260K.f32.gguf");
console.log("ok: models.list:", models.data[0].id);

const chat = await client.chat.completions.create({
	model: "stories260K", messages, max_tokens: 24, temperature: 0,
});
assert.equal(chat.object, "chat.completion");
assert.equal(chat.choices[0].message.role, "assistant");
assert.ok(chat.choices[0].message.content.length > 0);
assert.equal(chat.choices[0].finish_reason, "length");
assert.equal(chat.usage.completion_tokens, 24);
assert.equal(chat.usage.total_tokens, chat.usage.prompt_tokens + 24);
console.log("ok: chat.completions.create:", JSON.stringify(chat.choices[0].message.content));

const stream = await client.chat.completions.create({
	model: "stories260K", messages, max_tokens: 24, temperature: 0, stream: true,
	stream_options: { include_usage: true },
});
let text = "", finish = null, usage = null, chunks = 0;
for await (const chunk of stream) {
	chunks++;
	assert.equal(chunk.object, "chat.completion.chunk");
	if (chunk.usage) usage = chunk.usage;
	for (const c of chunk.choices) {
		text += c.delta.content ?? "";
		if (c.finish_reason) finish = c.finish_reason;
	}
}
assert.equal(text, chat.choices[0].message.content);
assert.equal(finish, "length");
assert.equal(usage.completion_tokens, 24);
console.log(`ok: streamed chat: the same text in ${chunks} chunks, usage`);

// the stream helper that assembles the message, as applications use it
const runner = client.chat.completions.stream({
	model: "stories260K", messages, max_tokens: 24, temperature: 0,
});
const final = await runner.finalChatCompletion();
assert.equal(final.choices[0].message.content, text);
console.log("ok: chat.completions.stream().finalChatCompletion()");

const completion = await client.completions.create({
	model: "stories260K", prompt: "Once upon a time", max_tokens: 16, temperature: 0,
	stop: ["zzz"],
});
assert.equal(completion.object, "text_completion");
assert.equal(completion.usage.completion_tokens, 16);
console.log("ok: completions.create:", JSON.stringify(completion.choices[0].text));

await assert.rejects(
	client.chat.completions.create({
		model: "stories260K", messages: [{ role: "robot", content: "hi" }],
	}),
	(err) => err instanceof OpenAI.BadRequestError && err.status === 400 &&
		err.param === "messages" && /robot/.test(err.message),
);
const badKey = new OpenAI({ baseURL, apiKey: "wrong", maxRetries: 0 });
await assert.rejects(badKey.models.list(),
	(err) => err instanceof OpenAI.AuthenticationError && err.status === 401);
console.log("ok: 400 as BadRequestError (param messages), 401 as AuthenticationError");
