"""Metadata shared by every asset that calls the LLM layer."""

import dagster as dg

from rag_assets.llm.results import OFFLINE, LLMStats


def provider_label(stats: LLMStats) -> str:
    if stats.provider == OFFLINE:
        return "offline (deterministic heuristics, not a model's judgment)"
    via_batch = f" ({stats.batched} calls via Message Batches)" if stats.batched else ""
    return f"{stats.provider} / {stats.model}{via_batch}"


def llm_metadata(stats: LLMStats) -> dict[str, dg.MetadataValue]:
    values: dict[str, dg.MetadataValue] = {"llm": dg.MetadataValue.text(provider_label(stats))}
    for label, value in stats.as_dict().items():
        if label in ("llm_provider", "llm_model"):
            values[label] = dg.MetadataValue.text(str(value))
        elif value is None:
            values[label] = dg.MetadataValue.text("unknown (no price for the model)")
        elif isinstance(value, float):
            values[label] = dg.MetadataValue.float(value)
        else:
            values[label] = dg.MetadataValue.int(value)
    return values
