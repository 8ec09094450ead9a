#!/usr/bin/env python3
"""QLoRA fine-tuning for migadvisor's reference workloads (Wulver's "LLM Fine-Tuning").

Qwen/Qwen2.5-1.5B-Instruct, loaded in 4 bits (bitsandbytes NF4, bf16 compute)
with LoRA adapters (PEFT) on the attention and MLP projections, trained for
one epoch on the first 1,000 samples of yahma/alpaca-cleaned. It prints what
migadvisor reads from a job's output:

    MIGADVISOR_WORK <tokens> tokens
    MIGADVISOR_METRIC tokens_per_s, training_time_s, peak_allocated_mib, peak_reserved_mib
    MIGADVISOR_VERSION python, torch, transformers, peft, bitsandbytes, cuda, device

--synthetic needs no download: a model of Qwen2.5-1.5B's configuration with
random weights (saved once to --cache and reloaded in 4 bits, as a real
checkpoint would be) trained on random token sequences whose lengths follow
alpaca-cleaned's (about 166 tokens a sample). Without bitsandbytes it trains
the LoRA adapters on bf16 weights and says so.
"""
import argparse
import os
import platform
import sys
import time

try:
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    import peft
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
except ImportError as e:
    sys.exit("qlora_finetune.py: %s; this workload needs PyTorch, transformers and peft "
             "(and bitsandbytes for 4-bit weights), see bench/workloads/README.md" % e)

# Qwen2.5-1.5B-Instruct's config.json, for --synthetic.
QWEN25_15B = dict(model_type="qwen2", vocab_size=151936, hidden_size=1536, intermediate_size=8960,
                  num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
                  max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
                  tie_word_embeddings=True, hidden_act="silu")

PROMPT = ("Below is an instruction that describes a task{ctx}. Write a response that appropriately "
          "completes the request.\n\n### Instruction:\n{instruction}\n\n{input}### Response:\n{output}")


def bnb_config():
    try:
        import bitsandbytes
    except ImportError:
        return None, None
    cfg = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                          bnb_4bit_compute_dtype=torch.bfloat16, bnb_4bit_use_double_quant=True)
    return cfg, bitsandbytes.__version__


def load_model(a, quant):
    """The model to fine-tune: the real checkpoint, or a random one of its shape."""
    source = a.model
    if a.synthetic:
        source = os.path.join(a.cache, "qwen2.5-1.5b-random")
        if not os.path.exists(os.path.join(source, "config.json")):
            cfg = AutoConfig.for_model(**QWEN25_15B)
            torch.manual_seed(a.seed)
            AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16).save_pretrained(source)
    kw = dict(torch_dtype=torch.bfloat16, device_map={"": 0} if torch.cuda.is_available() else None)
    if quant is not None:
        kw["quantization_config"] = quant
    model = AutoModelForCausalLM.from_pretrained(source, **kw)
    if quant is not None:
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
    else:
        model.gradient_checkpointing_enable()
        model.enable_input_require_grads()
    lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, bias="none", task_type="CAUSAL_LM",
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    return get_peft_model(model, lora)


def real_samples(a):
    """alpaca-cleaned's first samples as prompts, tokenised."""
    try:
        from datasets import load_dataset
    except ImportError:
        sys.exit("qlora_finetune.py: the datasets package is needed to download %s; install it or use --synthetic" % a.dataset)
    tok = AutoTokenizer.from_pretrained(a.model)
    ds = load_dataset(a.dataset, split="train[:%d]" % a.samples)
    out = []
    for ex in ds:
        text = PROMPT.format(ctx=", paired with an input that provides further context" if ex["input"] else "",
                             instruction=ex["instruction"], input=("### Input:\n%s\n\n" % ex["input"]) if ex["input"] else "",
                             output=ex["output"]) + tok.eos_token
        out.append(tok(text, truncation=True, max_length=a.max_length)["input_ids"])
    return out


def synthetic_samples(a):
    """Random token ids; lengths drawn around alpaca-cleaned's mean of ~166 tokens."""
    g = torch.Generator().manual_seed(a.seed)
    lengths = (torch.randn(a.samples, generator=g) * 90 + 166).clamp(24, a.max_length).long()
    return [torch.randint(0, QWEN25_15B["vocab_size"], (int(n),), generator=g).tolist() for n in lengths]


def collate(seqs, device):
    n = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), n, dtype=torch.long)
    mask = torch.zeros(len(seqs), n, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    labels = ids.masked_fill(mask == 0, -100)
    return ids.to(device), mask.to(device), labels.to(device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="Qwen/Qwen2.5-1.5B-Instruct")
    ap.add_argument("--dataset", default="yahma/alpaca-cleaned")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--synthetic", action="store_true", help="random weights and tokens of the real shapes, no download")
    ap.add_argument("--cache", default="cache", help="where --synthetic keeps its random checkpoint")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("qlora_finetune.py: no CUDA device; 4-bit training needs one, so this runs in bf16 on the CPU (slowly)",
              file=sys.stderr)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    quant, bnb_version = bnb_config() if device == "cuda" else (None, None)
    if quant is None and device == "cuda":
        print("qlora_finetune.py: bitsandbytes is not installed; LoRA on bf16 weights instead of 4-bit", file=sys.stderr)

    for name, v in (("python", platform.python_version()), ("torch", torch.__version__),
                    ("transformers", transformers.__version__), ("peft", peft.__version__),
                    ("bitsandbytes", bnb_version), ("cuda", torch.version.cuda if device == "cuda" else None),
                    ("device", torch.cuda.get_device_name(0) if device == "cuda" else "cpu")):
        if v:
            print("MIGADVISOR_VERSION %s %s" % (name, v))

    samples = synthetic_samples(a) if a.synthetic else real_samples(a)
    model = load_model(a, quant)
    if device == "cpu":
        model.to(device)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=a.lr)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    model.train()
    tokens, t0 = 0, time.perf_counter()
    for epoch in range(a.epochs):
        for i in range(0, len(samples), a.batch_size):
            ids, mask, labels = collate(samples[i:i + a.batch_size], device)
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            tokens += int(mask.sum())
            if (i // a.batch_size) % 25 == 0:
                print("epoch %d step %d: loss %.4f" % (epoch + 1, i // a.batch_size, loss.item()), flush=True)
    if device == "cuda":
        torch.cuda.synchronize()
    train_s = time.perf_counter() - t0

    print("MIGADVISOR_WORK %d tokens" % tokens)
    print("MIGADVISOR_METRIC training_time_s %.3f" % train_s)
    print("MIGADVISOR_METRIC tokens_per_s %.1f" % (tokens / train_s))
    if device == "cuda":
        print("MIGADVISOR_METRIC peak_allocated_mib %.1f" % (torch.cuda.max_memory_allocated() / 2**20))
        print("MIGADVISOR_METRIC peak_reserved_mib %.1f" % (torch.cuda.max_memory_reserved() / 2**20))


if __name__ == "__main__":
    main()
