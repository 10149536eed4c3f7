// belt serve's chat page (core/serve/page.c) in headless Chromium through
// playwright-core (tests/serve-page.sh): a message without the API key
// shows the server's 401 message; the key typed once is kept across a
// reload; two greedy turns stream into the page, and the text the page
// shows equals the API's non-streamed answer to the same conversation.
// Prints one line per check; exits 1 at the first that fails.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";

const [base, key, executablePath] = process.argv.slice(2);
const browser = await chromium.launch({
	executablePath,
	headless: true,
	// no sandbox as root; no network beyond the server
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let failed = false;
try {
	await run(await browser.newPage());
} catch (e) {
	console.log("serve_page.mjs: FAIL:", e.message);
	failed = true;
} finally {
	await browser.close();
}
process.exit(failed ? 1 : 0);

// The API's greedy answer to messages, not streamed.
async function apiAnswer(messages, maxTokens) {
	const r = await fetch(`${base}/v1/chat/completions`, {
		method: "POST",
		headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
		body: JSON.stringify({ messages, temperature: 0, max_tokens: maxTokens }),
	});
	assert.equal(r.status, 200, `the API answered ${r.status}`);
	return (await r.json()).choices[0].message.content;
}

// Send text from the page and wait until its answer has ended (the button
// says Send again); the texts the last assistant message showed on the way.
async function send(page, text) {
	await page.evaluate(() => {
		window.__shown = [];
		window.__watch = new MutationObserver((records) => {
			for (const r of records)
				for (const n of r.addedNodes)
					if (n.nodeType === Node.TEXT_NODE && r.target.classList.contains("assistant"))
						window.__shown.push(n.data);
		});
		window.__watch.observe(document.getElementById("log"), { childList: true, subtree: true });
	});
	const before = await page.locator(".msg").count();
	await page.fill("#in", text);
	await page.press("#in", "Enter");
	await page.waitForFunction(
		(n) => document.querySelectorAll(".msg").length >= n + 2 &&
			document.getElementById("send").textContent === "Send",
		before, { timeout: 120000 });
	return page.evaluate(() => {
		window.__watch.disconnect();
		return window.__shown;
	});
}

async function run(page) {
	await page.goto(`${base}/`);
	assert.equal(await page.title(), "belt");
	console.log("ok: the page loads");

	// without the key: the server's 401 message in the page
	await send(page, "Hello?");
	const error = await page.locator(".msg.error").textContent();
	assert.match(error, /API key/);
	console.log("ok: without the key the page shows:", JSON.stringify(error));

	// the key, typed once, is kept in localStorage across a reload
	await page.fill("#key", key);
	await page.press("#key", "Tab");
	await page.reload();
	assert.equal(await page.inputValue("#key"), key);
	assert.equal(await page.locator(".msg").count(), 0);
	console.log("ok: the key is kept across a reload");

	// greedy turns, compared with the API on the same conversation
	// long answers (the server runs with -c 2048), so that even a fast
	// machine sends each in several chunks
	const maxTokens = 300;
	await page.fill("#temp", "0");
	await page.fill("#max", String(maxTokens));
	await page.fill("#system", "You tell stories.");
	const history = [{ role: "system", content: "You tell stories." }];
	for (const text of ["Tell me a story about a cat.", "And one about a dog."]) {
		const shown = await send(page, text);
		const answers = await page.locator(".msg.assistant").allTextContents();
		const inPage = answers[answers.length - 1];
		assert.equal(await page.locator(".msg.error").count(), 0, "an error in the page");
		history.push({ role: "user", content: text });
		const api = await apiAnswer(history, maxTokens);
		history.push({ role: "assistant", content: api });
		assert.ok(api.length > 0, "the API's answer is empty");
		assert.equal(inPage, api, "the page's text differs from the API's answer");
		// streamed: the text grew in steps, each a beginning of the answer
		assert.ok(shown.length >= 2, `the answer came in ${shown.length} update`);
		for (const s of shown)
			assert.ok(api.startsWith(s), `the page showed ${JSON.stringify(s)} on the way`);
		assert.equal(shown[shown.length - 1], api);
		console.log(`ok: "${text}" streamed into the page in ${shown.length} updates, ` +
			`as the API answers: ${JSON.stringify(inPage)}`);
	}
	const users = await page.locator(".msg.user").allTextContents();
	assert.deepEqual(users, ["Tell me a story about a cat.", "And one about a dog."]);
}
