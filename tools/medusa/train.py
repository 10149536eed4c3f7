#!/usr/bin/env python3
"""Train Medusa-1 draft heads for a frozen base model by self-distillation.

The data comes from `belt-medusa data` (tools/medusa/medusa.c): for every
position of the model's own greedy continuations, the hidden state after the
final norm and the tokens that followed it.  The heads learned here are packed
into a side file with `belt-medusa pack` (doc/drafting.md, "Training the
heads").

Model (base frozen).  Head k (k = 1..K) maps the hidden state h [E] to

    h_k = h + silu(W_k @ h + b_k)          W_k [E x E] (W_k[out][in]), b_k [E]
    logits_k = W_out @ h_k                 W_out [V x E], the base's own output

and is trained to predict the token 1 + k positions after h's own next token
(next[:, k]).  W_k and b_k start at zero, so every head starts out as the
base model's own next-token prediction.

Example:

    python3 tools/medusa/train.py --data /data/medusa/wiki --data /data/medusa/code \\
        --eval-data /data/medusa/chat --heads 4 --epochs 4 \\
        --out heads.f32 --report report.json
    belt-medusa pack -i heads.f32 -o heads.gguf -k 4 -e E -v V

Input folder (one per --data / --eval-data):
    meta.txt     "key value" lines: n_embd, n_vocab, rows, next_cols, check_rows,
                 output_type, output_rows, output_cols
    hidden.f32   rows x n_embd float32: hidden state after the final norm
    next.i32     rows x next_cols int32: the tokens at +1 .. +next_cols, -1 past the end
    seq.i32      rows int32: the sequence (window) each row belongs to
    output.bin   the output projection's bytes as stored in the GGUF file
    check.f32    check_rows x n_vocab float32: the model's logits for the first rows

Output (--out): raw little-endian float32, for k = 1..K: W_k (E x E, row-major,
W_k[out][in]) then b_k (E).

Works with PyTorch 1.13 and later (only long-standing APIs are used).
"""

import argparse
import json
import math
import os
import shlex
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


# --------------------------------------------------------------------------
# Reading a data folder
# --------------------------------------------------------------------------

class DataError(Exception):
    """A problem with the input data: reported as an error, exit status 1."""


def read_meta(folder):
    """Parse meta.txt ("key value" lines) into a dict; numbers become int."""
    path = os.path.join(folder, "meta.txt")
    meta = {}
    try:
        with open(path, "r") as f:
            for line in f:
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != 2:
                    raise DataError("%s: bad line %r" % (path, line.rstrip()))
                key, value = parts
                try:
                    meta[key] = int(value)
                except ValueError:
                    meta[key] = value
    except OSError as e:
        raise DataError("%s: %s" % (path, e))
    for key in ("n_embd", "n_vocab", "rows", "next_cols", "check_rows",
                "output_type", "output_rows", "output_cols"):
        if key not in meta:
            raise DataError("%s: no %s" % (path, key))
    return meta


def expect_size(path, nbytes):
    """Fail unless the file exists and holds exactly nbytes bytes."""
    try:
        size = os.path.getsize(path)
    except OSError as e:
        raise DataError("%s: %s" % (path, e))
    if size != nbytes:
        raise DataError("%s: %d bytes, expected %d (meta.txt disagrees with the data)"
                        % (path, size, nbytes))


def read_into(path, out):
    """Read a whole file into the contiguous numpy array `out` (its exact size)."""
    expect_size(path, out.nbytes)
    view = out.reshape(-1).view(np.uint8)
    chunk = 1 << 28  # read() returns at most ~2 GiB at a time on Linux
    with open(path, "rb") as f:
        done = 0
        while done < view.size:
            n = f.readinto(view[done:done + chunk])
            if not n:
                raise DataError("%s: short read" % path)
            done += n


# --------------------------------------------------------------------------
# Dequantizing the output projection (GGUF/ggml layouts) to float32
# --------------------------------------------------------------------------

def dequant_f32(raw, n):
    return np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)


def dequant_f16(raw, n):
    return np.frombuffer(raw, dtype="<f2", count=n).astype(np.float32)


def dequant_bf16(raw, n):
    # bf16 is the top half of a float32: shift it into place.
    u = np.frombuffer(raw, dtype="<u2", count=n).astype(np.uint32) << 16
    return u.view(np.float32)


# q8_0: blocks of 32 values: fp16 scale d, then 32 int8 q; value = d * q.
Q8_0_BLOCK = np.dtype([("d", "<f2"), ("q", "i1", (32,))])  # 34 bytes, packed

# q6_k: blocks of 256 values (210 bytes): ql[128] low 4 bits, qh[64] high
# 2 bits, scales[16] int8 (one per 16 values), d fp16 (super-block scale).
Q6_K_BLOCK = np.dtype([("ql", "u1", (128,)), ("qh", "u1", (64,)),
                       ("sc", "i1", (16,)), ("d", "<f2")])


def dequant_q8_0(raw, n):
    blocks = np.frombuffer(raw, dtype=Q8_0_BLOCK, count=n // 32)
    d = blocks["d"].astype(np.float32)[:, None]
    return (d * blocks["q"].astype(np.float32)).reshape(-1)


def _q6_k_chunk(blocks):
    """Dequantize an array of q6_k blocks to float32 [len(blocks) * 256]."""
    nb = len(blocks)
    # Each block is two halves of 128 values; per half: 64 bytes of ql,
    # 32 bytes of qh, 8 scales.
    ql = blocks["ql"].reshape(nb, 2, 64)
    qh = blocks["qh"].reshape(nb, 2, 32)
    lo_a = ql[:, :, :32]   # ql[l]      for l = 0..31
    lo_b = ql[:, :, 32:]   # ql[l + 32]
    q1 = (lo_a & 0xF) | ((qh & 3) << 4)          # -> y[l]
    q2 = (lo_b & 0xF) | (((qh >> 2) & 3) << 4)   # -> y[l + 32]
    q3 = (lo_a >> 4) | (((qh >> 4) & 3) << 4)    # -> y[l + 64]
    q4 = (lo_b >> 4) | (((qh >> 6) & 3) << 4)    # -> y[l + 96]
    # [nb, half, quarter, l] is exactly the output order within the block.
    q = np.stack([q1, q2, q3, q4], axis=2).reshape(nb, 256).astype(np.int8) - np.int8(32)
    # Value i of a half uses scale (2 * quarter + l // 16) of that half,
    # i.e. value i of the block uses scale i // 16: repeat each scale 16 times.
    # Multiply as ggml does: (d * sc) first, in float32, then by q.
    ds = blocks["d"].astype(np.float32)[:, None] * blocks["sc"].astype(np.float32)
    return (np.repeat(ds, 16, axis=1) * q.astype(np.float32)).reshape(-1)


def dequant_q6_k(raw, n):
    blocks = np.frombuffer(raw, dtype=Q6_K_BLOCK, count=n // 256)
    out = np.empty(n, dtype=np.float32)
    step = 1 << 18  # blocks per chunk, to bound the temporaries' memory
    for a in range(0, len(blocks), step):
        b = min(a + step, len(blocks))
        out[a * 256:b * 256] = _q6_k_chunk(blocks[a:b])
    return out


# type name -> (values per block, bytes per block, decoder)
DEQUANT = {
    "f32": (1, 4, dequant_f32),
    "f16": (1, 2, dequant_f16),
    "bf16": (1, 2, dequant_bf16),
    "q8_0": (32, Q8_0_BLOCK.itemsize, dequant_q8_0),
    "q6_k": (256, Q6_K_BLOCK.itemsize, dequant_q6_k),
}


def load_output(folder, meta):
    """The output projection W_out as float32 [output_rows x output_cols]."""
    kind = meta["output_type"]
    rows, cols = meta["output_rows"], meta["output_cols"]
    if kind not in DEQUANT:
        raise DataError("%s: output_type %s is not supported (only %s)"
                        % (folder, kind, ", ".join(sorted(DEQUANT))))
    per_block, block_bytes, decode = DEQUANT[kind]
    if cols % per_block:
        raise DataError("%s: output_cols %d is not a multiple of the %s block (%d)"
                        % (folder, cols, kind, per_block))
    n = rows * cols
    path = os.path.join(folder, "output.bin")
    expect_size(path, n // per_block * block_bytes)
    with open(path, "rb") as f:
        raw = f.read()
    return decode(raw, n).reshape(rows, cols)


def same_file(a, b):
    """Whether two files hold the same bytes (compared in chunks)."""
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 24), fb.read(1 << 24)
            if x != y:
                return False
            if not x:
                return True


# --------------------------------------------------------------------------
# A set of rows: one or more folders concatenated
# --------------------------------------------------------------------------

class RowSet:
    """hidden [R x E] float32, next [R x C] int32, seq [R] int64 (unique over
    folders: each folder's numbers are offset past the previous folder's)."""

    def __init__(self, folders, metas):
        self.folders = folders
        m0 = metas[0]
        self.E, self.C = m0["n_embd"], m0["next_cols"]
        total = sum(m["rows"] for m in metas)
        self.hidden = np.empty((total, self.E), dtype=np.float32)
        self.next = np.empty((total, self.C), dtype=np.int32)
        self.seq = np.empty(total, dtype=np.int64)
        self.starts = []  # first row of each folder
        at, seq_base = 0, 0
        for folder, m in zip(folders, metas):
            r = m["rows"]
            self.starts.append(at)
            read_into(os.path.join(folder, "hidden.f32"), self.hidden[at:at + r])
            read_into(os.path.join(folder, "next.i32"), self.next[at:at + r])
            s = np.empty(r, dtype=np.int32)
            read_into(os.path.join(folder, "seq.i32"), s)
            if r:
                if s.min() < 0:
                    raise DataError("%s/seq.i32: negative sequence numbers" % folder)
                self.seq[at:at + r] = s.astype(np.int64) + seq_base
                seq_base = int(self.seq[at:at + r].max()) + 1
            at += r
        self.rows = total


def check_compatible(metas, folders, ref_meta, ref_folder, heads):
    """All folders must come from the same model as the reference folder."""
    for folder, m in zip(folders, metas):
        for key in ("n_embd", "n_vocab", "next_cols", "output_type",
                    "output_rows", "output_cols"):
            if m[key] != ref_meta[key]:
                raise DataError("%s: %s %s, but %s has %s" % (folder, key, m[key],
                                                              ref_folder, ref_meta[key]))
        if folder != ref_folder and not same_file(os.path.join(folder, "output.bin"),
                                                  os.path.join(ref_folder, "output.bin")):
            raise DataError("%s/output.bin differs from %s/output.bin (another model?)"
                            % (folder, ref_folder))
        if m["output_cols"] != m["n_embd"]:
            raise DataError("%s: output_cols %d != n_embd %d"
                            % (folder, m["output_cols"], m["n_embd"]))
        if heads > m["next_cols"] - 1:
            raise DataError("%s: --heads %d, but next.i32 has targets for at most %d heads"
                            % (folder, heads, m["next_cols"] - 1))


def check_logits(folder, meta, w_out, tol):
    """Compare W_out @ hidden with the model's own logits (check.f32) for the
    folder's first check_rows rows; raise DataError if they disagree."""
    n, V, E = meta["check_rows"], meta["output_rows"], meta["n_embd"]
    if n == 0:
        print("check %s: no check rows, skipped" % folder)
        return
    if n > meta["rows"]:
        raise DataError("%s: check_rows %d > rows %d" % (folder, n, meta["rows"]))
    if meta["n_vocab"] != V:
        raise DataError("%s: n_vocab %d != output_rows %d" % (folder, meta["n_vocab"], V))
    ref = np.empty((n, V), dtype=np.float32)
    read_into(os.path.join(folder, "check.f32"), ref)
    hid = np.empty((n, E), dtype=np.float32)
    with open(os.path.join(folder, "hidden.f32"), "rb") as f:
        f.readinto(hid.reshape(-1).view(np.uint8))
    ours = (torch.from_numpy(hid) @ w_out.t()).numpy()  # fp32, on the CPU
    diff = float(np.abs(ours - ref).max())
    scale = float(np.abs(ref).max())
    ours_arg, ref_arg = ours.argmax(1), ref.argmax(1)
    agree = int((ours_arg == ref_arg).sum())
    limit = tol * scale
    print("check %s: %d rows, max |diff| %.3g (max |logit| %.3g, limit %.3g), "
          "argmax agrees on %d/%d" % (folder, n, diff, scale, limit, agree, n))
    bad = []
    if agree != n:
        # a quantized model's own logits come from rounded activations: a
        # near tie (top-2 gap within the allowed difference) may flip
        for r in np.nonzero(ours_arg != ref_arg)[0][:4]:
            top2 = np.sort(ref[r])[-2:]
            if top2[1] - top2[0] < limit:
                print("check %s: row %d flips at a near tie (gap %.3g)"
                      % (folder, r, top2[1] - top2[0]))
                continue
            bad.append("row %d: ours %d, model's %d (model's top-2 gap %.3g)"
                       % (r, ours_arg[r], ref_arg[r], top2[1] - top2[0]))
    if bad or not diff <= limit:  # "not <=" also catches NaN
        raise DataError("%s: W_out @ hidden does not match check.f32 (wrong "
                        "dequantization of %s or misaligned data)%s"
                        % (folder, meta["output_type"],
                           "".join("\n  " + b for b in bad)))


# --------------------------------------------------------------------------
# The heads
# --------------------------------------------------------------------------

class MedusaHeads(torch.nn.Module):
    """K residual heads: h_k = h + silu(W_k @ h + b_k), all applied at once."""

    def __init__(self, K, E):
        super().__init__()
        # Zero init: every head starts as the base model's own prediction.
        self.weight = torch.nn.Parameter(torch.zeros(K, E, E))  # [k][out][in]
        self.bias = torch.nn.Parameter(torch.zeros(K, E))

    def forward(self, h):
        """h [B x E] -> h_k [K x B x E]."""
        z = torch.matmul(h.unsqueeze(0), self.weight.transpose(1, 2))  # [K, B, E]
        z = z + self.bias.unsqueeze(1)
        return h.unsqueeze(0) + F.silu(z)


def write_heads(path, heads):
    """Raw float32 LE: per head W_k (E x E, [out][in]) then b_k (E)."""
    W = heads.weight.detach().float().cpu().numpy()
    b = heads.bias.detach().float().cpu().numpy()
    parts = []
    for k in range(W.shape[0]):
        parts.append(W[k].reshape(-1))
        parts.append(b[k])
    tmp = path + ".tmp"
    np.concatenate(parts).astype("<f4").tofile(tmp)
    os.replace(tmp, path)


# --------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------

@torch.no_grad()
def evaluate(heads, w_out, hidden, nxt, rows, K, batch, device):
    """Per-head loss / top-1 / top-4 on the given rows, the base model's own
    agreement with next[:, 0], and the greedy chain's expected accepted tokens.

    hidden [R x E] float32 and nxt [R x C] int64 are tensors (on the CPU or the
    device); rows is a LongTensor of row numbers on the same device; w_out is
    the fp32 output projection on the device."""
    V = w_out.shape[0]
    topn = min(4, V)
    loss = torch.zeros(K, dtype=torch.float64)
    count = torch.zeros(K, dtype=torch.int64)
    top1 = torch.zeros(K, dtype=torch.int64)
    top4 = torch.zeros(K, dtype=torch.int64)
    chain = torch.zeros(K, dtype=torch.int64)  # rows with heads 1..k all right
    chain_rows = 0
    base_right, base_rows = 0, 0
    for a in range(0, len(rows), batch):
        idx = rows[a:a + batch]
        h = hidden.index_select(0, idx).to(device).float()
        t = nxt.index_select(0, idx).to(device)
        # The base model's own next token (a sanity check of the data).
        t0 = t[:, 0]
        ok0 = t0 >= 0
        base_right += int(((h @ w_out.t()).argmax(1) == t0)[ok0].sum())
        base_rows += int(ok0.sum())
        logits = torch.matmul(heads(h), w_out.t())  # [K, B, V], fp32
        right = torch.zeros(K, len(idx), dtype=torch.bool, device=device)
        for k in range(K):
            tgt = t[:, k + 1]
            ok = tgt >= 0
            lk = logits[k]
            loss[k] += float(F.cross_entropy(lk, tgt, ignore_index=-1, reduction="sum"))
            count[k] += int(ok.sum())
            best = lk.topk(topn, dim=1).indices  # [B, topn], best first
            right[k] = (best[:, 0] == tgt) & ok
            top1[k] += int(right[k].sum())
            top4[k] += int(((best == tgt.unsqueeze(1)).any(1) & ok).sum())
        # Chain: only rows where all K targets exist.
        full = (t[:, 1:K + 1] >= 0).all(1)
        chain_rows += int(full.sum())
        run = torch.cumprod(right[:, full].long(), dim=0)  # [K, rows]
        chain += run.sum(1).cpu()
    frac = lambda x, n: float(x) / n if n else float("nan")
    result = {
        "rows": int(len(rows)),
        "base_top1": frac(base_right, base_rows),
        "heads": [],
        "chain_rows": chain_rows,
        "chain_frac": [frac(chain[k], chain_rows) for k in range(K)],
    }
    for k in range(K):
        n = int(count[k])
        result["heads"].append({
            "head": k + 1,
            "target_col": k + 1,
            "rows": n,
            "loss": frac(loss[k], n),
            "top1": frac(top1[k], n),
            "top4": frac(top4[k], n),
        })
    result["tau_chain"] = 1.0 + sum(result["chain_frac"]) if chain_rows else float("nan")
    return result


def json_clean(x):
    """Non-finite floats (NaN: nothing to count) become null in the JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: json_clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_clean(v) for v in x]
    return x


def print_table(title, res):
    print("%s: %d rows; the base model's argmax = next[:, 0] on %.4f"
          % (title, res["rows"], res["base_top1"]))
    print("  head  target  rows      loss     top1    top4    chain")
    for h, c in zip(res["heads"], res["chain_frac"]):
        print("  %4d  +%-5d  %-8d  %7.4f  %6.4f  %6.4f  %6.4f"
              % (h["head"], h["target_col"] + 1, h["rows"], h["loss"], h["top1"],
                 h["top4"], c))
    print("  tau_chain %.4f (expected tokens per step, over %d rows with all targets)"
          % (res["tau_chain"], res["chain_rows"]))


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Train Medusa-1 draft heads (base model frozen) by "
                    "self-distillation from `belt-medusa data` folders.")
    p.add_argument("--data", action="append", required=True, metavar="DIR",
                   help="a data folder (repeatable: rows of all are concatenated)")
    p.add_argument("--eval-data", action="append", default=[], metavar="DIR",
                   help="a data folder only evaluated (repeatable)")
    p.add_argument("--out", metavar="FILE", help="write the heads here (raw float32)")
    p.add_argument("--report", metavar="FILE", help="write the results here (JSON)")
    p.add_argument("--heads", type=int, default=4, help="number of heads K (default 4)")
    p.add_argument("--epochs", type=int, default=4, help="epochs (default 4)")
    p.add_argument("--batch", type=int, default=1024, help="rows a step (default 1024)")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (default 1e-3)")
    p.add_argument("--weight-decay", type=float, default=0.0, help="AdamW weight decay (0)")
    p.add_argument("--warmup", type=float, default=0.03,
                   help="warmup as a fraction of all steps (default 0.03, at least 1 step)")
    p.add_argument("--decay", type=float, default=0.8,
                   help="loss weight of head k is DECAY^(k-1) (default 0.8)")
    p.add_argument("--holdout", type=float, default=0.1,
                   help="fraction of the sequences (the last ones) held out (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--device", default=None,
                   help="torch device (default: cuda if available, else cpu)")
    p.add_argument("--precision", choices=["auto", "fp32", "bf16"], default="auto",
                   help="the training matmul against W_out: bf16 (default on CUDA) "
                        "or fp32 (default on CPU); master weights and evaluation are fp32")
    p.add_argument("--data-on-device", choices=["auto", "yes", "no"], default="auto",
                   help="keep the hidden states on the device (auto: if they fit)")
    p.add_argument("--check-tol", type=float, default=1e-2,
                   help="check.f32 limit: max |diff| <= TOL * max |logit| (default 1e-2)")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads for torch (default: torch's choice)")
    p.add_argument("--log-every", type=int, default=0,
                   help="print the training loss every N steps (default: ~10 an epoch)")
    args = p.parse_args(argv)
    if args.heads < 1:
        p.error("--heads must be at least 1")
    if args.epochs < 1 or args.batch < 1:
        p.error("--epochs and --batch must be at least 1")
    if not 0.0 <= args.holdout < 1.0:
        p.error("--holdout must be in [0, 1)")
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    try:  # progress lines appear at once even when piped to a file
        sys.stdout.reconfigure(line_buffering=True)
    except AttributeError:
        pass
    command = shlex.join([sys.executable] + [sys.argv[0]] + list(argv))
    print("command: %s" % command)
    t_start = time.time()

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    cuda = device.type == "cuda"
    bf16 = args.precision == "bf16" or (args.precision == "auto" and cuda)
    K = args.heads
    print("torch %s on %s, training matmul in %s" % (torch.__version__, device,
                                                     "bf16" if bf16 else "fp32"))

    # ---- Data: metas, compatibility, W_out, the check against check.f32.
    train_metas = [read_meta(d) for d in args.data]
    eval_metas = [read_meta(d) for d in args.eval_data]
    ref_folder, ref_meta = args.data[0], train_metas[0]
    check_compatible(train_metas + eval_metas, args.data + args.eval_data,
                     ref_meta, ref_folder, K)
    E, V = ref_meta["n_embd"], ref_meta["output_rows"]
    t0 = time.time()
    w_np = load_output(ref_folder, ref_meta)
    print("W_out: %d x %d from %s (%s), %.1fs" % (V, E, ref_folder,
                                                 ref_meta["output_type"], time.time() - t0))
    if not np.isfinite(w_np).all():
        raise DataError("%s/output.bin: non-finite values after dequantization" % ref_folder)
    w_cpu = torch.from_numpy(w_np)
    for folder, m in zip(args.data + args.eval_data, train_metas + eval_metas):
        check_logits(folder, m, w_cpu, args.check_tol)

    train_set = RowSet(args.data, train_metas)
    eval_sets = [RowSet([d], [m]) for d, m in zip(args.eval_data, eval_metas)]
    for rs in [train_set] + eval_sets:
        bad = (rs.next < -1) | (rs.next >= V)
        if bad.any():
            raise DataError("%s: next.i32 holds tokens outside -1..%d" % (rs.folders, V - 1))

    # ---- Split by sequence: the last --holdout fraction of them is held out.
    seqs = np.unique(train_set.seq)
    n_hold = int(round(args.holdout * len(seqs)))
    if args.holdout > 0 and len(seqs) > 1:
        n_hold = max(1, n_hold)
    n_hold = min(n_hold, len(seqs) - 1)
    held_seqs = seqs[len(seqs) - n_hold:] if n_hold > 0 else seqs[:0]
    is_held = np.isin(train_set.seq, held_seqs)
    train_rows = np.nonzero(~is_held)[0]
    held_rows = np.nonzero(is_held)[0]
    print("data: %d rows of %d sequences from %d folder(s); training on %d rows "
          "(%d sequences), %d held out (%d sequences)"
          % (train_set.rows, len(seqs), len(args.data), len(train_rows),
             len(seqs) - n_hold, len(held_rows), n_hold))
    if len(train_rows) == 0:
        raise DataError("no training rows")

    # ---- Tensors: W_out (fp32 for evaluation, bf16 for training if chosen).
    w_out = w_cpu.to(device)
    w_train = w_out.to(torch.bfloat16) if bf16 else w_out
    del w_np, w_cpu

    def place(rs):
        """The set's hidden states and targets as tensors, on the device if
        they fit (or as asked), else in CPU memory."""
        hid = torch.from_numpy(rs.hidden)
        nxt = torch.from_numpy(rs.next).long()
        want = args.data_on_device
        if cuda and want == "auto":
            try:
                free = torch.cuda.mem_get_info(device)[0]
            except Exception:  # not available: play safe
                free = 0
            want = "yes" if hid.nbytes + nxt.nbytes < 0.5 * free else "no"
        if want == "yes" and device.type != "cpu":
            return hid.to(device), nxt.to(device)
        return hid, nxt

    hid_t, nxt_t = place(train_set)
    data_dev = hid_t.device
    train_idx = torch.from_numpy(train_rows).to(data_dev)
    held_idx = torch.from_numpy(held_rows).to(data_dev)

    heads = MedusaHeads(K, E).to(device)
    opt = torch.optim.AdamW(heads.parameters(), lr=args.lr, betas=(0.9, 0.999),
                            weight_decay=args.weight_decay)
    steps_per_epoch = (len(train_rows) + args.batch - 1) // args.batch
    total_steps = steps_per_epoch * args.epochs
    warmup = max(1, int(round(args.warmup * total_steps)))

    def lr_factor(step):
        """Linear warmup, then cosine decay to zero at the last step."""
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total_steps - warmup)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    # Head k+1 weighs decay^k in the loss.
    head_weights = torch.tensor([args.decay ** k for k in range(K)], device=device)
    log_every = args.log_every or max(1, steps_per_epoch // 10)
    gen = torch.Generator()
    gen.manual_seed(args.seed)

    report = {"command": command, "args": vars(args), "n_embd": E, "n_vocab": V,
              "output_type": ref_meta["output_type"], "heads": K,
              "train_rows": int(len(train_rows)), "heldout_rows": int(len(held_rows)),
              "train_seqs": int(len(seqs) - n_hold), "heldout_seqs": int(n_hold),
              "steps": total_steps, "epochs": []}

    if len(held_rows):
        res = evaluate(heads, w_out, hid_t, nxt_t, held_idx, K, args.batch, device)
        print_table("held-out before training (heads = the base's next token)", res)
        report["heldout_initial"] = res

    # ---- Training.
    print("training: %d epochs x %d steps of %d rows, warmup %d steps, lr %g"
          % (args.epochs, steps_per_epoch, args.batch, warmup, args.lr))
    t_train = time.time()
    t_steps = 0.0  # the training steps alone, without the per-epoch evaluation
    step = 0
    for epoch in range(args.epochs):
        heads.train()
        order = train_idx[torch.randperm(len(train_idx), generator=gen).to(data_dev)]
        # Per-head sums of the loss and of the rows counted, kept on the
        # device so that a step needs no synchronization (read at log steps).
        ep_loss = torch.zeros(K, dtype=torch.float64, device=device)
        ep_count = torch.zeros(K, dtype=torch.int64, device=device)
        t_ep = time.time()
        for a in range(0, len(order), args.batch):
            idx = order[a:a + args.batch]
            h = hid_t.index_select(0, idx).to(device, non_blocking=True).float()
            t = nxt_t.index_select(0, idx).to(device, non_blocking=True)
            hk = heads(h)  # [K, B, E] fp32
            # One matmul against the frozen W_out for all heads at once.
            logits = torch.matmul(hk.to(w_train.dtype), w_train.t())  # [K, B, V]
            tgts = t[:, 1:K + 1]  # [B, K]: head k+1's target in column k
            counts = (tgts >= 0).sum(0)  # [K]
            sums = torch.stack([F.cross_entropy(logits[k].float(), tgts[:, k],
                                                ignore_index=-1, reduction="sum")
                                for k in range(K)])  # [K]
            # Mean over each head's rows that have a target, weighted per head.
            loss = (head_weights * sums / counts.clamp(min=1)).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            ep_loss += sums.detach().double()
            ep_count += counts
            if step % log_every == 0 or step == total_steps:
                cur = float(loss.detach())
                if not math.isfinite(cur):
                    raise RuntimeError("the loss is not finite at step %d" % step)
                per = (sums.detach() / counts.clamp(min=1)).tolist()
                print("  epoch %d step %d/%d  loss %.4f  [%s]  lr %.3g  %.0f rows/s"
                      % (epoch + 1, step, total_steps, cur,
                         " ".join("%.3f" % x for x in per), sched.get_last_lr()[0],
                         (a + len(idx)) / max(1e-9, time.time() - t_ep)))
        if cuda:
            torch.cuda.synchronize()
        t_steps += time.time() - t_ep
        heads.eval()
        ep_loss, ep_count = ep_loss.cpu(), ep_count.cpu()
        ep = {"epoch": epoch + 1,
              "train_loss": [float(ep_loss[k]) / max(1, int(ep_count[k])) for k in range(K)]}
        if not all(math.isfinite(x) for x in ep["train_loss"]):
            raise RuntimeError("the loss is not finite in epoch %d" % (epoch + 1))
        line = "epoch %d: train loss per head [%s]" % (
            epoch + 1, " ".join("%.4f" % x for x in ep["train_loss"]))
        if len(held_rows):
            res = evaluate(heads, w_out, hid_t, nxt_t, held_idx, K, args.batch, device)
            ep["heldout_loss"] = [x["loss"] for x in res["heads"]]
            ep["heldout_top1"] = [x["top1"] for x in res["heads"]]
            ep["heldout_tau_chain"] = res["tau_chain"]
            line += "; held-out loss [%s] top1 [%s] tau_chain %.4f" % (
                " ".join("%.4f" % x for x in ep["heldout_loss"]),
                " ".join("%.4f" % x for x in ep["heldout_top1"]), res["tau_chain"])
        print(line + " (%.1fs)" % (time.time() - t_ep))
        report["epochs"].append(ep)
    if cuda:
        torch.cuda.synchronize()
    train_time = time.time() - t_train
    report["train_seconds"] = train_time
    report["train_step_seconds"] = t_steps

    if args.out:
        write_heads(args.out, heads)
        print("wrote %s: %d heads of %d x %d + %d float32; pack with:\n"
              "  belt-medusa pack -i %s -o HEADS.gguf -k %d -e %d -v %d"
              % (args.out, K, E, E, E, shlex.quote(args.out), K, E, V))

    # ---- Final results: held-out rows and each evaluation folder.
    print()
    if len(held_rows):
        res = evaluate(heads, w_out, hid_t, nxt_t, held_idx, K, args.batch, device)
        print_table("held-out (%d sequences)" % n_hold, res)
        report["heldout"] = res
    del hid_t, nxt_t
    report["eval"] = []
    for folder, rs in zip(args.eval_data, eval_sets):
        hid_e, nxt_e = place(rs)
        rows_e = torch.arange(rs.rows, device=hid_e.device)
        res = evaluate(heads, w_out, hid_e, nxt_e, rows_e, K, args.batch, device)
        res["folder"] = folder
        print_table("eval %s" % folder, res)
        report["eval"].append(res)
        del hid_e, nxt_e

    report["total_seconds"] = time.time() - t_start
    if args.report:
        with open(args.report, "w") as f:
            json.dump(json_clean(report), f, indent=1, allow_nan=False)
        print("wrote %s" % args.report)
    print("command: %s" % command)
    print("training time %.1fs (%.1fs of it in training steps, the rest evaluating "
          "each epoch; total %.1fs)" % (train_time, t_steps, report["total_seconds"]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except DataError as e:
        print("train.py: error: %s" % e, file=sys.stderr)
        sys.exit(1)
