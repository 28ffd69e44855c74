"""Hugging Face transformers on CPU or CUDA: batched greedy/sampled ``generate``; the embedded default."""

from __future__ import annotations

import copy
import gc
import threading
import time
from typing import Sequence

from dialogbench.backends import engines
from dialogbench.backends.base import BackendError, BatchStats, Completion, Conversation, Sampling, check_seeds
from dialogbench.backends.chat_format import TemplatedChat, probe_template
from dialogbench.backends.formats import OutputFormat, enforced, enforced_kinds, per_conversation
from dialogbench.backends.weights import resolve_weights
from dialogbench.run.config import ModelConfig


class _Engine:
    """A loaded tokenizer and model, shared by every model config that names them (``engines``);
    the grammar compiler of constrained decoding and its compiled formats live here too."""

    def __init__(self, path: str, gguf_file: str | None, revision: str | None, device: str, dtype: str | None) -> None:
        self.tokenizer, self.lm = _load(path, gguf_file, revision, device, dtype)
        self._compiler = None
        self._grammars: dict[OutputFormat, object] = {}
        self.lock = threading.Lock()

    def grammar(self, format_: OutputFormat):
        """``format_`` compiled by xgrammar for this tokenizer (once per format)."""
        import xgrammar as xgr

        if format_ not in self._grammars:
            if self._compiler is None:
                vocab = max(self.lm.config.vocab_size, len(self.tokenizer))
                info = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=vocab)
                self._compiler = xgr.GrammarCompiler(info)
            self._grammars[format_] = (self._compiler.compile_regex(format_.regex) if format_.kind == "regex" else
                                       self._compiler.compile_json_schema(format_.schema, any_whitespace=False,
                                                                               separators=(",", ":")))
        return self._grammars[format_]

    def close(self) -> None:
        self.tokenizer = self.lm = None
        self._grammars.clear()
        gc.collect()
        import torch
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _load(path: str, gguf_file: str | None, revision: str | None, device: str, dtype: str | None):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # per-tensor bars would flood the run log and the Prefect UI

    kwargs = {"gguf_file": gguf_file} if gguf_file else {}
    if revision:
        kwargs["revision"] = revision
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    if dtype:
        model = model.to(getattr(torch, dtype))
    model = model.to(device).eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer, model


def engine_spec(model: ModelConfig) -> tuple:
    """What ``engines.acquire`` keys this model's weights by (configs with the same one share them): ``transformers``,
    the weights' path and GGUF file, revision, device, dtype."""
    import torch

    try:
        weights = resolve_weights(model.weights or "")
    except FileNotFoundError as exc:
        raise BackendError(f"model {model.name!r}: weights: {exc}") from None
    device = ("cuda" if torch.cuda.is_available() else "cpu") if model.device == "auto" else model.device
    return ("transformers", weights.path, weights.gguf_file, model.revision, device, model.engine.get("dtype"))


class TransformersBackend(TemplatedChat):
    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        self.stats = BatchStats()
        spec = engine_spec(model)
        self.device = spec[4]
        self.engine_key, self._engine = engines.acquire(spec, lambda: _Engine(*spec[1:]))
        self.tokenizer, self.lm = self._engine.tokenizer, self._engine.lm
        self.version = transformers_version()
        self._kinds = enforced_kinds(model)
        self._ids: dict[str, list[int]] = {}  # rendered prompt → token ids, for the next generate
        if not self.tokenizer.chat_template:
            raise BackendError(f"model {model.name!r}: the tokenizer has no chat template")
        self._lock = self._engine.lock  # one generate at a time per engine: torch threads are shared
        system, leading = probe_template(self._render)
        template = model.chat_template
        self.system_native = system if template.system == "auto" else template.system == "native"
        self.leading_native = leading if template.leading_assistant == "auto" else template.leading_assistant == "native"

    def close(self) -> None:
        """Let go of the weights; they are freed when no other model config shares them."""
        if self.engine_key is not None:
            self.tokenizer = self.lm = self._engine = None
            engines.release(self.engine_key)
            self.engine_key = None

    def count_tokens_many(self, conversations: Sequence[Conversation]) -> list[int]:
        return [len(ids) for ids in self._encode([self._render(self._adapt(c)) for c in conversations])]

    def _encode(self, texts: list[str]) -> list[list[int]]:
        """Token ids of rendered prompts: the ones counted since the last ``generate`` are reused,
        the others tokenized together in one batched call."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._ids))
        if todo:
            if len(self._ids) + len(todo) > ENCODED_KEPT:
                self._ids.clear()
            for text, ids in zip(todo, self.tokenizer(todo, add_special_tokens=False)["input_ids"]):
                self._ids[text] = list(ids)
        return [self._ids[t] for t in texts]

    def generate(self, conversations: Sequence[Conversation], *, sampling: Sampling,
                 seeds: Sequence[int] | None = None,
                 formats: OutputFormat | Sequence[OutputFormat | None] | None = None) -> list[Completion]:
        """Micro-batches of ``batch_size`` (sorted by length, so little padding). When every prompt of
        the call starts with the same long token prefix (a judge's instructions and in-context
        examples), that prefix is encoded once and its KV cache shared by every row.

        With ``seeds`` (and temperature > 0) each row draws its tokens from its own generator,
        seeded with its own seed (see ``SeededSampler``); without them, one global ``torch``
        seed (``sampling.seed``) per micro-batch, as before."""
        seeds = check_seeds(conversations, seeds)
        applied = [enforced(f, self._kinds) for f in per_conversation(formats, len(conversations))]
        if seeds is None and sampling.temperature > 0 and any(applied):
            # A grammar mask must come before sampling; the seeded sampler draws after it (one seed
            # for every row, as vLLM does with one SamplingParams seed).
            seeds = [sampling.seed or 0] * len(conversations)
        start = time.perf_counter()
        ids = self._encode([self._render(self._adapt(c)) for c in conversations])
        self._ids = {}
        results: list[Completion | None] = [None] * len(ids)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        with self._lock:
            prefix = self._prefix_cache(ids)
            for lo in range(0, len(order), self.model.batch_size):
                idx = order[lo: lo + self.model.batch_size]
                try:
                    batch = self._generate_batch([ids[i] for i in idx], sampling, prefix,
                                                 None if seeds is None else [seeds[i] for i in idx],
                                                 [applied[i] for i in idx])
                except Exception as exc:  # an OOM or a bad prompt fails this micro-batch only
                    batch = [Completion(text=None, error=f"{type(exc).__name__}: {exc}") for _ in idx]
                for i, completion in zip(idx, batch):
                    results[i] = completion
        done = [r for r in results if r is not None]
        self.stats.record(done, seconds=time.perf_counter() - start)
        return done

    def _prefix_cache(self, ids: list[list[int]]):
        """(length, KV cache) of the token prefix all prompts share, if it is worth caching."""
        import torch
        from transformers import DynamicCache

        length = shared_prefix_length(ids)
        if len(ids) < 2 or length < PREFIX_MIN_TOKENS:
            return None
        cache = DynamicCache()
        with torch.inference_mode():
            self.lm(input_ids=torch.tensor([ids[0][:length]], device=self.device), past_key_values=cache, use_cache=True)
        return length, cache

    def _generate_batch(self, ids: list[list[int]], sampling: Sampling, prefix,
                        seeds: list[int] | None = None,
                        formats: list[OutputFormat | None] | None = None) -> list[Completion]:
        import torch
        from transformers import LogitsProcessorList

        pad = self.tokenizer.pad_token_id
        cached, cache = prefix if prefix else (0, None)
        # Left-pad each row's uncached part: [shared prefix][pads][suffix]; positions come from the
        # attention mask, so the pads in the middle change nothing.
        tails = [row[cached:] for row in ids]
        width = max(len(t) for t in tails)
        rows = [ids[0][:cached] + [pad] * (width - len(t)) + t for t in tails]
        masks = [[1] * cached + [0] * (width - len(t)) + [1] * len(t) for t in tails]
        kwargs = dict(max_new_tokens=sampling.max_tokens, pad_token_id=pad)
        if cache is not None:
            batch_cache = copy.deepcopy(cache)
            batch_cache.batch_repeat_interleave(len(rows))
            kwargs["past_key_values"] = batch_cache
        processors = self._grammar_processors(formats or [])
        if sampling.temperature > 0 and seeds is not None:
            # Greedy over scores that are -inf but for the token each row's own generator drew.
            sampler = SeededSampler(seeds, temperature=sampling.temperature, top_p=sampling.top_p,
                                    top_k=self._top_k())
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None,
                          logits_processor=LogitsProcessorList([*processors, sampler]))
        elif sampling.temperature > 0:
            if sampling.seed is not None:
                torch.manual_seed(sampling.seed)
            kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None,
                          logits_processor=LogitsProcessorList(processors))
        input_ids = torch.tensor(rows, device=self.device)
        with torch.inference_mode():
            out = self.lm.generate(input_ids=input_ids, attention_mask=torch.tensor(masks, device=self.device), **kwargs)
        new = out[:, input_ids.shape[1]:]
        stop = {self.tokenizer.eos_token_id, pad}
        results = []
        for row, prompt, format_ in zip(new.tolist(), ids, formats or [None] * len(ids)):
            n = next((k for k, t in enumerate(row) if t in stop), len(row))
            text = self.tokenizer.decode(row[:n], skip_special_tokens=True)
            text = text if format_ is not None else text.strip()  # a constrained reply is kept as matched
            results.append(Completion(text=text, prompt_tokens=len(prompt), completion_tokens=n, engine=self.version,
                                      constraint=format_.label if format_ else None))
        return results

    def _grammar_processors(self, formats: list[OutputFormat | None]) -> list:
        """xgrammar's logits processor for the rows that have a format (the others get a grammar
        that accepts any text), or nothing when no row has one."""
        if not any(formats):
            return []
        from xgrammar.contrib.hf import LogitsProcessor

        return [LogitsProcessor([self._engine.grammar(f or FREE_TEXT) for f in formats])]

    def _top_k(self) -> int | None:
        """The top-k that ``generate(do_sample=True)`` applies here: the checkpoint's generation
        config, else transformers' default (50), so seeded rows sample from the same distribution
        as unseeded ones."""
        from transformers import GenerationConfig

        top_k = getattr(self.lm.generation_config, "top_k", None)
        if top_k is None:
            defaults = getattr(GenerationConfig, "_get_default_generation_params", None)  # transformers 5
            top_k = defaults().get("top_k") if defaults else GenerationConfig().top_k
        return top_k or None


class SeededSampler:
    """A logits processor that samples each row with its own ``torch.Generator``.

    Row ``i`` is warped alone (temperature, then top-k, then top-p: transformers' own warpers, in
    the order ``generate(do_sample=True)`` applies them), one token is drawn from it with the
    generator seeded by ``seeds[i]``, and the returned scores are -inf everywhere but at that
    token, so greedy decoding picks it. Each row draws exactly one token per step from its own
    generator, so what it draws does not depend on the other rows of its batch."""

    def __init__(self, seeds: Sequence[int], *, temperature: float, top_p: float, top_k: int | None) -> None:
        from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

        self.seeds = list(seeds)
        self.warpers = [TemperatureLogitsWarper(temperature)] if temperature != 1.0 else []
        if top_k:
            self.warpers.append(TopKLogitsWarper(top_k=top_k))
        if top_p < 1.0:
            self.warpers.append(TopPLogitsWarper(top_p=top_p))
        self.generators = None

    def __call__(self, input_ids, scores):
        import torch

        if self.generators is None:  # made on the first step, on the device the scores are on
            self.generators = [torch.Generator(device=scores.device).manual_seed(seed) for seed in self.seeds]
        if scores.shape[0] != len(self.generators):
            raise ValueError(f"SeededSampler: {scores.shape[0]} rows for {len(self.generators)} seeds")
        drawn = []
        for i, generator in enumerate(self.generators):
            row_ids, row = input_ids[i: i + 1], scores[i: i + 1].float()
            for warper in self.warpers:
                row = warper(row_ids, row)
            probs = torch.softmax(row, dim=-1)
            drawn.append(torch.multinomial(probs[0], 1, generator=generator))
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, torch.stack(drawn), 0.0)
        return out


ENCODED_KEPT = 8192  # rendered prompts whose token ids are kept between counting and generating
FREE_TEXT = OutputFormat(name="free", regex=r"(.|\n)*")  # the rows of a mixed batch that have no format


def transformers_version() -> str:
    import torch
    import transformers

    return f"{transformers.__version__} (torch {torch.__version__})"


PREFIX_MIN_TOKENS = 256  # below this, encoding the prefix per row costs less than copying its cache


def shared_prefix_length(ids: list[list[int]]) -> int:
    """Tokens every row starts with, leaving at least one token of each row uncached."""
    if not ids:
        return 0
    limit = min(len(row) for row in ids) - 1
    first = ids[0]
    for k in range(max(limit, 0)):
        token = first[k]
        if any(row[k] != token for row in ids):
            return k
    return max(limit, 0)
