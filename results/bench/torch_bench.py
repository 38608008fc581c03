#!/usr/bin/env python3
"""PyTorch CPU reference figures ("anchors") for a tiny Llama-style policy.

Run it with Debian's interpreter and Debian's torch (python3-torch 1.13), not
with another python3 that happens to be first on PATH:

    apt-get install python3-torch libopenblas0-openmp
    /usr/bin/python3 torch_bench.py --model small --check
    /usr/bin/python3 torch_bench.py --model tiny --threads 2 --workloads W1 W2 W3
    /usr/bin/python3 torch_bench.py --threads 1 --workloads peak
    /usr/bin/python3 torch_bench.py --model tiny --threads 2 --workloads W1 W2 --int8   # dynamic int8

Debian's torch sends fp32 matmuls to whatever libblas.so.3 the alternatives
system points at. python3-torch alone brings only the netlib reference BLAS
(about 6 GFLOP/s, single-threaded, here); libopenblas0-openmp takes over
libblas.so.3 (about 190 GFLOP/s per core) and follows torch.set_num_threads.
The BLAS actually loaded is printed with the results.

Architecture (Llama style, float32, no biases): token embedding, pre-norm
blocks of RMSNorm -> causal multi-head attention with RoPE -> residual,
RMSNorm -> SwiGLU FFN -> residual, final RMSNorm, untied output head.
Weights are random (normal, std 0.02): speed does not depend on training.
The q/k/v projections are one fused matrix (same arithmetic as three,
one matmul instead of three); the FFN keeps Llama's separate w1/w3/w2.
RoPE rotates interleaved pairs (as Meta's Llama and llama2.c do) with one
complex multiply. A decode step (one new token per sequence) does its
attention as broadcast multiply + sum instead of a batched matmul: this
torch build runs a batched matmul of many tiny matrices as a loop of
separate BLAS calls, which made batch-64 decoding 1.4-1.5x slower.
These choices were measured on a 2-core AMD EPYC machine (the one
results/performance.md names).

Workloads (each repeat is timed with time.perf_counter; the figure is
tokens per second, median / min / max over the repeats, after warm-up):

  W1  batch 1 rollout: a 16-token prompt (one prefill forward), then
      sample until max_seq (48 new tokens for tiny, 112 for small), one
      token per forward with a KV cache; multinomial sampling at
      temperature 1; the entropy of every step's next-token distribution.
      tokens/s = generated tokens / wall seconds (prefill included).
  W2  the same with 64 sequences in a batch, one forward per step for the
      whole batch. tokens/s = 64 * generated tokens / wall seconds.
  W3  one training step: forward + backward + Adam on a batch of 64
      sequences of max_seq tokens, next-token cross-entropy.
      tokens/s = 64 * max_seq / step seconds.
  peak  fp32 matmul throughput (GFLOP/s) of a 2048x2048x2048 product and of
      the models' own GEMM shapes; read bandwidth (GB/s) of a sum over
      8 MB, 64 MB and 1 GB; then, for both models, the FLOPs per token
      (see flop_floor) and the tokens/s they allow at the 2048^3 rate.

Results go to stdout, one line per figure, and with --json PATH they are
also appended to PATH as JSON lines.
"""

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


# ----------------------------------------------------------------------------
# Model


@dataclass(frozen=True)
class Config:
    vocab: int
    dim: int
    n_layers: int
    n_heads: int
    hidden_dim: int
    max_seq: int

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads


CONFIGS = {
    "tiny": Config(vocab=64, dim=128, n_layers=4, n_heads=4, hidden_dim=384, max_seq=64),
    "small": Config(vocab=64, dim=256, n_layers=6, n_heads=8, hidden_dim=768, max_seq=128),
}

PROMPT_LEN = 16     # W1/W2 prompt length
ROLLOUT_BATCH = 64  # W2 sequences per batch
TRAIN_BATCH = 64    # W3 sequences per step
INIT_STD = 0.02


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rope_table(head_dim: int, max_seq: int, theta: float = 10000.0):
    """Unit complex rotations of shape (max_seq, head_dim / 2): pair j of a head
    at position p is turned by the angle p * theta^(-2j / head_dim)."""
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_seq, dtype=torch.float32), inv_freq)
    return torch.polar(torch.ones_like(angles), angles)


def apply_rope(x, rot):
    """x: (B, H, T, head_dim) real; rot: (T, head_dim / 2) complex.
    Rotates the pairs (x[2j], x[2j+1]) as complex numbers."""
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * rot).flatten(-2)


class KVCache:
    """Preallocated keys and values, per layer, of shape (B, H, max_seq, head_dim)."""

    def __init__(self, cfg: Config, batch: int):
        shape = (batch, cfg.n_heads, cfg.max_seq, cfg.head_dim)
        self.k = [torch.zeros(shape) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape) for _ in range(cfg.n_layers)]


class Attention(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.n_heads, self.head_dim = cfg.n_heads, cfg.head_dim
        self.wqkv = nn.Linear(cfg.dim, 3 * cfg.dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def forward(self, x, rot, mask, cache_k=None, cache_v=None, pos=0):
        B, T, D = x.shape
        q, k, v = (
            self.wqkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        )  # each (B, H, T, head_dim)
        q, k = apply_rope(q, rot), apply_rope(k, rot)
        if cache_k is not None:
            cache_k[:, :, pos:pos + T] = k
            cache_v[:, :, pos:pos + T] = v
            k, v = cache_k[:, :, :pos + T], cache_v[:, :, :pos + T]
        scale = 1.0 / math.sqrt(self.head_dim)
        if T == 1:
            # Decode step: one query per sequence and head, i.e. a batched
            # mat-vec; broadcast multiply + sum over (B, H, ctx, head_dim).
            probs = ((q * k).sum(dim=-1) * scale).softmax(dim=-1)  # (B, H, ctx)
            out = (probs.unsqueeze(-1) * v).sum(dim=-2)  # (B, H, head_dim)
            return self.wo(out.reshape(B, 1, D))
        scores = (q @ k.transpose(-2, -1)) * scale  # (B, H, T, ctx)
        if mask is not None:
            scores = scores + mask
        out = scores.softmax(dim=-1) @ v  # (B, H, T, head_dim)
        return self.wo(out.transpose(1, 2).reshape(B, T, D))


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x)."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.hidden_dim, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.hidden_dim, bias=False)
        self.w2 = nn.Linear(cfg.hidden_dim, cfg.dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.dim)
        self.attn = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim)
        self.ffn = FeedForward(cfg)

    def forward(self, x, rot, mask, cache_k=None, cache_v=None, pos=0):
        x = x + self.attn(self.attn_norm(x), rot, mask, cache_k, cache_v, pos)
        return x + self.ffn(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim)
        self.output = nn.Linear(cfg.dim, cfg.vocab, bias=False)  # untied head
        self.register_buffer("rope", rope_table(cfg.head_dim, cfg.max_seq), persistent=False)
        for name, p in self.named_parameters():
            if not name.endswith("norm.weight"):
                nn.init.normal_(p, mean=0.0, std=INIT_STD)

    def forward(self, tokens, pos: int = 0, cache: KVCache = None, last_only: bool = False):
        """tokens (B, T) at positions pos..pos+T-1 -> logits (B, T, vocab),
        or (B, vocab) for the last position only when last_only."""
        B, T = tokens.shape
        rot = self.rope[pos:pos + T]
        mask = None
        if T > 1:  # causal mask over the T new rows and the pos+T visible columns
            mask = torch.full((T, pos + T), float("-inf")).triu(pos + 1)
        x = self.tok_emb(tokens)
        for i, layer in enumerate(self.layers):
            ck = cache.k[i] if cache is not None else None
            cv = cache.v[i] if cache is not None else None
            x = layer(x, rot, mask, ck, cv, pos)
        if last_only:
            x = x[:, -1, :]
        return self.output(self.norm(x))


# ----------------------------------------------------------------------------
# Workloads


@torch.inference_mode()
def rollout(model: Transformer, prompt, n_new: int, temperature: float = 1.0, generator=None):
    """Prefill the prompt, then sample n_new tokens one forward at a time.

    Returns the sampled tokens (B, n_new) and the entropy (nats) of each
    step's next-token distribution (B, n_new)."""
    B, P = prompt.shape
    cache = KVCache(model.cfg, B)
    sampled = torch.empty(B, n_new, dtype=torch.long)
    entropy = torch.empty(B, n_new)
    logits = model(prompt, pos=0, cache=cache, last_only=True)  # (B, vocab)
    for i in range(n_new):
        logp = F.log_softmax(logits / temperature, dim=-1)
        probs = logp.exp()
        entropy[:, i] = -(probs * logp).sum(dim=-1)
        nxt = torch.multinomial(probs, 1, generator=generator)  # (B, 1)
        sampled[:, i] = nxt[:, 0]
        if i + 1 < n_new:  # the last sampled token is never fed back
            logits = model(nxt, pos=P + i, cache=cache, last_only=True)
    return sampled, entropy


def train_step(model: Transformer, opt, batch):
    """batch: (B, max_seq + 1) tokens; inputs are tokens 0..max_seq-1 and the
    targets tokens 1..max_seq."""
    inputs, targets = batch[:, :-1], batch[:, 1:]
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item()


def timed(fn, warmup: int, repeats: int):
    """Seconds per call of fn(), one figure per repeat, after warm-up calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def summarize(work_per_call: float, times):
    rates = sorted(work_per_call / t for t in times)
    return {
        "median": statistics.median(rates),
        "min": rates[0],
        "max": rates[-1],
        "median_ms": 1e3 * statistics.median(times),
        "repeats": len(times),
    }


def quantize_int8(model: nn.Module) -> nn.Module:
    """PyTorch's dynamic int8 quantization of every Linear (int8 weights, activations quantized per
    call): the anchor for int8 sampling."""
    engines = torch.backends.quantized.supported_engines
    for e in ("fbgemm", "onednn", "x86", "qnnpack"):
        if e in engines:
            torch.backends.quantized.engine = e
            break
    return torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)


def bench_rollout(cfg: Config, batch: int, warmup: int, repeats: int, seed: int, int8: bool = False):
    torch.manual_seed(seed)
    model = Transformer(cfg).eval()
    if int8:
        model = quantize_int8(model)
    n_new = cfg.max_seq - PROMPT_LEN
    prompt = torch.randint(cfg.vocab, (batch, PROMPT_LEN))
    gen = torch.Generator().manual_seed(seed)
    times = timed(lambda: rollout(model, prompt, n_new, 1.0, gen), warmup, repeats)
    res = summarize(batch * n_new, times)
    res.update(unit="generated tok/s", batch=batch, new_tokens=n_new)
    if int8:
        res.update(int8=torch.backends.quantized.engine)
    return res


def bench_train(cfg: Config, warmup: int, repeats: int, seed: int):
    torch.manual_seed(seed)
    model = Transformer(cfg).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = torch.randint(cfg.vocab, (TRAIN_BATCH, cfg.max_seq + 1))
    times = timed(lambda: train_step(model, opt, batch), warmup, repeats)
    res = summarize(TRAIN_BATCH * cfg.max_seq, times)
    res.update(unit="trained tok/s", batch=TRAIN_BATCH, seq=cfg.max_seq)
    return res


def bench_read(megabytes: int, warmup: int, repeats: int):
    """Read bandwidth (GB/s) of summing a float32 tensor of that size: the limit
    for work that streams weights (batch-1 decoding) or a KV cache."""
    x = torch.ones(megabytes * 2**20 // 4)
    times = timed(lambda: x.sum(), warmup, repeats)
    res = summarize(megabytes * 2**20 / 1e9, times)
    res.update(unit="GB/s", shape=f"read {megabytes} MB")
    return res


def bench_matmul(m: int, k: int, n: int, warmup: int, repeats: int):
    a, b = torch.randn(m, k), torch.randn(k, n)
    times = timed(lambda: a @ b, warmup, repeats)
    res = summarize(2.0 * m * k * n / 1e9, times)
    res.update(unit="GFLOP/s", shape=f"({m}x{k})@({k}x{n})")
    return res


# ----------------------------------------------------------------------------
# FLOP floor (counting 2 FLOPs per multiply-add, matmuls only: the norms,
# RoPE, SwiGLU gate and softmax are O(dim) per token and left out).


def matmul_params(cfg: Config) -> int:
    """Weights that take part in a matmul: every layer's q, k, v, o, w1, w2, w3
    and the untied output head; not the embedding table (a lookup) nor the norms."""
    per_layer = 4 * cfg.dim * cfg.dim + 3 * cfg.dim * cfg.hidden_dim
    return cfg.n_layers * per_layer + cfg.vocab * cfg.dim


def forward_flops(cfg: Config, ctx: float) -> float:
    """Forward FLOPs for one token that attends to ctx positions (itself included):
    2 x matmul params + 4 * n_layers * dim * ctx for q.k and the weighted sum of v."""
    return 2 * matmul_params(cfg) + 4 * cfg.n_layers * cfg.dim * ctx


def flop_floor(cfg: Config):
    """FLOPs per counted token for W1/W2 (a rollout's prefill and decode forwards,
    divided by the generated tokens) and for W3 (3x the causal forward)."""
    n_new = cfg.max_seq - PROMPT_LEN
    # A rollout runs positions 0 .. max_seq-2: the prompt, then every sampled
    # token but the last; position p attends to p + 1 positions.
    rollout_flops = sum(forward_flops(cfg, p + 1) for p in range(cfg.max_seq - 1))
    train_fwd = forward_flops(cfg, (cfg.max_seq + 1) / 2)  # causal: mean context
    return {
        "matmul_params": matmul_params(cfg),
        "fwd_flops_at_full_ctx": forward_flops(cfg, cfg.max_seq),
        "rollout_flops_per_generated_token": rollout_flops / n_new,
        "train_flops_per_token": 3 * train_fwd,
    }


def model_gemm_shapes(cfg: Config):
    """The w1 (or w3) GEMM of W3's forward and of one W2 decode step, as (m, k, n)."""
    tokens = TRAIN_BATCH * cfg.max_seq
    return [
        (tokens, cfg.dim, cfg.hidden_dim),  # W3 forward, SwiGLU w1 (or w3)
        (ROLLOUT_BATCH, cfg.dim, cfg.hidden_dim),  # W2 decode step, same weights
    ]


# ----------------------------------------------------------------------------
# Correctness check: cached decoding must match the uncached forward pass.


@torch.inference_mode()
def check(cfg: Config, seed: int):
    torch.manual_seed(seed)
    model = Transformer(cfg).eval()
    tokens = torch.randint(cfg.vocab, (3, cfg.max_seq))
    full = model(tokens)  # (B, T, vocab), causal, no cache
    cache = KVCache(cfg, 3)
    step = [model(tokens[:, :PROMPT_LEN], pos=0, cache=cache)]
    for p in range(PROMPT_LEN, cfg.max_seq):
        step.append(model(tokens[:, p:p + 1], pos=p, cache=cache))
    err = (torch.cat(step, dim=1) - full).abs().max().item()
    # RoPE: q.k must depend only on the distance between the two positions.
    q, k = torch.randn(2, 1, 1, 1, cfg.head_dim)
    dots = [(apply_rope(q, model.rope[m + 5:m + 6]) * apply_rope(k, model.rope[m:m + 1])).sum()
            for m in range(cfg.max_seq - 5)]
    rope_err = (torch.stack(dots) - dots[0]).abs().max().item()
    sampled, ent = rollout(model, tokens[:, :PROMPT_LEN], cfg.max_seq - PROMPT_LEN)
    ok = (err < 1e-4 and rope_err < 1e-4
          and bool(((ent >= 0) & (ent <= math.log(cfg.vocab) + 1e-4)).all()))
    print(f"check {cfg}: max |cached - full| = {err:.2e}, rope shift error {rope_err:.2e}, "
          f"entropy range [{ent.min().item():.4f}, {ent.max().item():.4f}] "
          f"(uniform = {math.log(cfg.vocab):.4f}) -> {'OK' if ok else 'FAILED'}")
    return ok


# ----------------------------------------------------------------------------
# CLI


def blas_library():
    """The BLAS shared object this process actually loaded (Debian alternatives)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "blas" in line.lower()}
        return ", ".join(sorted(os.path.realpath(p) for p in paths)) or "none"
    except OSError:
        return "unknown"


def report(res: dict, json_path: str = None):
    if json_path:
        with open(json_path, "a") as f:
            f.write(json.dumps(res) + "\n")
    if res["workload"] == "floor":
        print(f"floor {res['model']:5s} {res['matmul_params']} matmul params; "
              f"W1/W2 {res['rollout_flops_per_generated_token'] / 1e6:.3f} MFLOP per generated "
              f"token -> <= {res['rollout_bound_tok_s']:.0f} tok/s; "
              f"W3 {res['train_flops_per_token'] / 1e6:.3f} MFLOP per trained token "
              f"-> <= {res['train_bound_tok_s']:.0f} tok/s (at {res['peak_gflops']:.1f} GFLOP/s)",
              flush=True)
        return
    what = res.get("shape", res["model"])
    print(f"{res['workload']:4s} {what:24s} threads={res['threads']} "
          f"median={res['median']:.1f} min={res['min']:.1f} max={res['max']:.1f} "
          f"{res['unit']} ({res['median_ms']:.2f} ms/repeat, n={res['repeats']})", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=sorted(CONFIGS), default="tiny")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workloads", nargs="+", default=["W1", "W2", "W3"],
                    choices=["W1", "W2", "W3", "peak"])
    ap.add_argument("--repeats", type=int, default=None,
                    help="timed repeats per workload (default: W1 15, W2 7, W3 7, peak 15)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--check", action="store_true", help="only verify the KV cache and exit")
    ap.add_argument("--int8", action="store_true",
                    help="W1/W2 with PyTorch dynamic int8 quantization of every Linear")
    ap.add_argument("--json", help="append results to this file as JSON lines")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    cfg = CONFIGS[args.model]
    if args.check:
        sys.exit(0 if check(cfg, args.seed) else 1)

    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "blas": blas_library(),  # libtorch_cpu links libblas.so.3: mapped at import
    }
    default_repeats = {"W1": 15, "W2": 7, "W3": 7, "peak": 15}
    for w in args.workloads:
        reps = args.repeats or default_repeats[w]
        if w == "W1":
            results = [bench_rollout(cfg, 1, args.warmup, reps, args.seed, args.int8)]
        elif w == "W2":
            results = [bench_rollout(cfg, ROLLOUT_BATCH, args.warmup, reps, args.seed, args.int8)]
        elif w == "W3":
            results = [bench_train(cfg, args.warmup, reps, args.seed)]
        else:  # peak: matmul GFLOP/s, then the FLOP floor of both models at that rate
            shapes = [(2048, 2048, 2048)] + [s for c in CONFIGS.values() for s in model_gemm_shapes(c)]
            results = [bench_matmul(m, k, n, args.warmup, reps) for m, k, n in shapes]
            peak = results[0]["median"]
            results += [bench_read(mb, args.warmup, reps) for mb in (8, 64, 1024)]
            for name, c in CONFIGS.items():
                f = flop_floor(c)
                f.update(model=name, peak_gflops=peak,
                         rollout_bound_tok_s=peak * 1e9 / f["rollout_flops_per_generated_token"],
                         train_bound_tok_s=peak * 1e9 / f["train_flops_per_token"])
                results.append(dict(workload="floor", **f))
        for res in results:
            if res.get("workload") != "floor":
                res.update(workload=w, model=args.model)
            res.update(env)
            report(res, args.json)
    print(f"# python {env['python']}, torch {env['torch']}, blas {env['blas']}")


if __name__ == "__main__":
    main()
