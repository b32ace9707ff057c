"""BERT-like encoder and GPT-2-like decoder written with plain modules.

Attention math is explicit (no nn.MultiheadAttention / nn.TransformerEncoder, whose fused
fast paths bypass their submodules) and lives in a parameter-free leaf module,
``AttentionCore``, so that the profiler times it as one layer. Weights are initialised as
in the original models (normal, std 0.02; zero biases); nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class BertConfig:
    """BERT-large by default: 335,141,888 parameters with pooler, 336,226,108 with the
    pre-training heads (the MLM decoder weight is tied to the word embeddings)."""

    layers: int = 24
    hidden: int = 1024
    heads: int = 16
    ffn: int = 4096
    vocab: int = 30522
    max_positions: int = 512
    type_vocab: int = 2
    dropout: float = 0.1
    layer_norm_eps: float = 1e-12


@dataclass(frozen=True)
class GptConfig:
    """GPT-2 small by default: 124,439,808 parameters (lm_head tied to wte)."""

    layers: int = 12
    hidden: int = 768
    heads: int = 12
    vocab: int = 50257
    max_positions: int = 1024
    dropout: float = 0.1
    layer_norm_eps: float = 1e-5


class AttentionCore(nn.Module):
    """Scaled dot-product attention over `heads` heads of q, k, v ``(batch, seq, hidden)``:
    split heads, scores, optional causal mask, softmax, dropout, weighted sum, merge heads."""

    def __init__(self, heads: int, dropout: float, causal: bool, max_positions: int) -> None:
        super().__init__()
        self.heads = heads
        self.dropout = dropout
        self.causal = causal
        future = None
        if causal:
            future = torch.ones(max_positions, max_positions, dtype=torch.bool).triu(1)
        self.register_buffer("future", future, persistent=False)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = q.shape
        head_dim = hidden // self.heads
        q, k, v = (t.view(batch, seq, self.heads, head_dim).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-2, -1)) * (head_dim ** -0.5)
        if self.causal:
            scores = scores.masked_fill(self.future[:seq, :seq], float("-inf"))
        probs = F.dropout(F.softmax(scores, dim=-1), self.dropout, self.training)
        return torch.matmul(probs, v).transpose(1, 2).reshape(batch, seq, hidden)


def init_weights(module: nn.Module) -> None:
    """BERT/GPT-2 initialisation: normal(0, 0.02) weights, zero biases, unit LayerNorms."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


# ---- BERT -------------------------------------------------------------------------------


class BertEmbeddings(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab, c.hidden)
        self.position_embeddings = nn.Embedding(c.max_positions, c.hidden)
        self.token_type_embeddings = nn.Embedding(c.type_vocab, c.hidden)
        self.norm = nn.LayerNorm(c.hidden, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.dropout)
        self.register_buffer("positions", torch.arange(c.max_positions), persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq = tokens.shape[1]
        x = (self.word_embeddings(tokens) + self.position_embeddings(self.positions[:seq])
             + self.token_type_embeddings(torch.zeros_like(tokens)))
        return self.dropout(self.norm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)
        self.core = AttentionCore(c.heads, c.dropout, causal=False, max_positions=c.max_positions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.core(self.query(x), self.key(x), self.value(x))


class AddNorm(nn.Module):
    """``norm(dropout(dense(x)) + residual)``: BERT's post-LayerNorm sublayer output."""

    def __init__(self, c: BertConfig, width: int) -> None:
        super().__init__()
        self.dense = nn.Linear(width, c.hidden)
        self.dropout = nn.Dropout(c.dropout)
        self.norm = nn.LayerNorm(c.hidden, eps=c.layer_norm_eps)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(self.dropout(self.dense(x)) + residual)


class BertLayer(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attention_output = AddNorm(c, c.hidden)
        self.intermediate = nn.Linear(c.hidden, c.ffn)
        self.act = nn.GELU()
        self.output = AddNorm(c, c.ffn)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.attention_output(self.attention(x), x)
        return self.output(self.act(self.intermediate(x)), x)


class BertPooler(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c.hidden, c.hidden)
        self.activation = nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(x[:, 0]))


class BertMlmHead(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c.hidden, c.hidden)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(c.hidden, eps=c.layer_norm_eps)
        self.decoder = nn.Linear(c.hidden, c.vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.norm(self.act(self.dense(x))))


class Bert(nn.Module):
    """BERT with pooler and pre-training heads; returns (MLM logits, NSP logits)."""

    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.layers = nn.ModuleList(BertLayer(c) for _ in range(c.layers))
        self.pooler = BertPooler(c)
        self.mlm = BertMlmHead(c)
        self.nsp = nn.Linear(c.hidden, 2)
        self.apply(init_weights)
        self.mlm.decoder.weight = self.embeddings.word_embeddings.weight

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.embeddings(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.mlm(x), self.nsp(self.pooler(x))


# ---- GPT-2 ------------------------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    def __init__(self, c: GptConfig) -> None:
        super().__init__()
        self.hidden = c.hidden
        self.c_attn = nn.Linear(c.hidden, 3 * c.hidden)
        self.core = AttentionCore(c.heads, c.dropout, causal=True, max_positions=c.max_positions)
        self.c_proj = nn.Linear(c.hidden, c.hidden)
        self.resid_dropout = nn.Dropout(c.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.c_attn(x).split(self.hidden, dim=2)
        return self.resid_dropout(self.c_proj(self.core(q, k, v)))


class GptMlp(nn.Module):
    def __init__(self, c: GptConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(c.hidden, 4 * c.hidden)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * c.hidden, c.hidden)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class GptBlock(nn.Module):
    def __init__(self, c: GptConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(c.hidden, eps=c.layer_norm_eps)
        self.attn = CausalSelfAttention(c)
        self.ln_2 = nn.LayerNorm(c.hidden, eps=c.layer_norm_eps)
        self.mlp = GptMlp(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt2(nn.Module):
    """GPT-2 (pre-LayerNorm decoder, causal attention); returns logits (batch, seq, vocab)."""

    def __init__(self, c: GptConfig) -> None:
        super().__init__()
        self.wte = nn.Embedding(c.vocab, c.hidden)
        self.wpe = nn.Embedding(c.max_positions, c.hidden)
        self.drop = nn.Dropout(c.dropout)
        self.h = nn.ModuleList(GptBlock(c) for _ in range(c.layers))
        self.ln_f = nn.LayerNorm(c.hidden, eps=c.layer_norm_eps)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)
        self.register_buffer("positions", torch.arange(c.max_positions), persistent=False)
        self.apply(init_weights)
        self.lm_head.weight = self.wte.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq = tokens.shape[1]
        x = self.drop(self.wte(tokens) + self.wpe(self.positions[:seq]))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))
