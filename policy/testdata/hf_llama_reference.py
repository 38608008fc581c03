#!/usr/bin/env python3
"""Reference logits for policy's Hugging Face equivalence test.

Reads hf_tiny/ (model.safetensors + config.json, written by
`go generate ./policy`, which runs policy/internal/hftiny) and computes the logits of a
few token sequences with the forward pass of Hugging Face transformers'
LlamaForCausalLM (modeling_llama.py: LlamaRMSNorm, rotate_half RoPE,
repeat-free multi-head attention, SwiGLU MLP, untied lm_head), written out
here in plain PyTorch so that it runs without the transformers package.
Writes hf_tiny/logits.json.

    /usr/bin/python3 policy/testdata/hf_llama_reference.py
"""
import json
import math
import os
import struct

import torch

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf_tiny")


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        lo, hi = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[lo:hi]), dtype=torch.float32)
        out[name] = t.reshape(info["shape"])
    return out


class LlamaRMSNorm:  # modeling_llama.LlamaRMSNorm
    def __init__(self, weight, eps):
        self.weight, self.variance_epsilon = weight, eps

    def __call__(self, hidden_states):
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


def rotate_half(x):  # modeling_llama.rotate_half
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotary(head_dim, seq_len, theta):  # LlamaRotaryEmbedding (default rope type)
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    t = torch.arange(seq_len).float()
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def forward(w, cfg, ids):
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    hd, eps = D // H, cfg["rms_norm_eps"]
    T = len(ids)
    x = w["model.embed_tokens.weight"][torch.tensor(ids)]
    cos, sin = rotary(hd, T, cfg["rope_theta"])
    mask = torch.full((T, T), float("-inf")).triu(1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = LlamaRMSNorm(w[p + "input_layernorm.weight"], eps)(x)
        q = (h @ w[p + "self_attn.q_proj.weight"].T).view(T, H, hd).transpose(0, 1)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).view(T, H, hd).transpose(0, 1)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).view(T, H, hd).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin  # apply_rotary_pos_emb
        k = k * cos + rotate_half(k) * sin
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask, dim=-1) @ v
        x = x + a.transpose(0, 1).reshape(T, D) @ w[p + "self_attn.o_proj.weight"].T
        h = LlamaRMSNorm(w[p + "post_attention_layernorm.weight"], eps)(x)
        g = h @ w[p + "mlp.gate_proj.weight"].T
        u = h @ w[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(g) * u) @ w[p + "mlp.down_proj.weight"].T
    x = LlamaRMSNorm(w["model.norm.weight"], eps)(x)
    return x @ w["lm_head.weight"].T


def main():
    cfg = json.load(open(os.path.join(HERE, "config.json")))
    w = load_safetensors(os.path.join(HERE, "model.safetensors"))
    seqs = json.load(open(os.path.join(HERE, "sequences.json")))
    with torch.no_grad():
        out = [forward(w, cfg, s).tolist() for s in seqs]
    json.dump({"sequences": seqs, "logits": out, "torch": torch.__version__}, open(os.path.join(HERE, "logits.json"), "w"))


if __name__ == "__main__":
    main()
