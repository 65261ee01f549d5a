"""Metadata shared by every asset that calls the LLM layer."""

import dagster as dg

from rag_assets.llm.results import LLMStats, provider_label


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
