"""Every record name a view hands to its page (``page().data.names``) or packs into its blob names a record of the
shipped checkpoint's capture, and every captured record is covered by the prefixes / fixed names of
nilmbuild/model/names.py (which tests/test_no_record_names.py searches page JS for)."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest

from nilmbuild.model import names
from nilmbuild.site.views import attention, embedding, encoder, film, forward, gate, index
from nilmbuild.site.views._common import io_names


def _leaves(obj) -> list[str]:
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _leaves(v)]
    if isinstance(obj, (list, tuple)):
        return [s for v in obj for s in _leaves(v)]
    return [obj]


def _handed(ctx) -> dict[str, dict]:
    """Each page's names as its view builds them for this checkpoint."""
    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    return {
        "attention": attention.js_names(n_layers),
        "encoder": encoder.js_names(n_layers),
        "film": film.js_names(n_layers),
        "gate": gate.js_names(list(ctx.loaded.devices)),
        "embedding": embedding.js_names(len(ctx.loaded.cfg.dilations)),
        "index": io_names(),
        "disaggregation": io_names(),
        "forward": forward.js_names(ctx.loaded.cfg),
    }


def test_names_handed_to_pages_are_captured_records(site_context):
    records = site_context.capture.records
    missing = {page: [n for n in _leaves(d) if n not in records] for page, d in _handed(site_context).items()}
    assert all(not m for m in missing.values()), missing


def test_views_blob_lists_match_captured_records(site_context):
    """The record lists (and globs) the views pack each match at least one captured record."""
    records = list(site_context.capture.records)
    cfg = site_context.loaded.cfg
    n_layers = int(cfg.n_encoder_layers)
    lists = {
        "attention": attention.records(n_layers),
        "encoder": encoder.records(n_layers),
        "film": film.records(n_layers),
        "gate": gate.RECORDS,
        "embedding": embedding.RECORDS,
        "index": [n["record"] for n in index.nodes(cfg)] + [e[2] for e in index.flow_edges(cfg)],
        "forward": forward.records(site_context.loaded.cfg),
    }
    for page, wanted in lists.items():
        for pat in wanted:
            assert any(fnmatchcase(r, pat) for r in records), (page, pat)


def test_every_captured_record_has_a_prefix_or_fixed_name_from_names_py(site_context):
    stray = [n for n in site_context.capture.records if n not in names.FIXED and not n.startswith(names.PREFIXES)]
    assert stray == []


@pytest.mark.parametrize("layer", [0, 2])
def test_helpers_spell_the_names_the_model_traces(layer):
    assert names.attn(layer, "q") == f"encoder.{layer}.attn.q"
    assert names.ablation("no_mask", names.attn(layer, "weights")) == f"ablation.no_mask.encoder.{layer}.attn.weights"
    assert names.embed_unit(layer, "out") == f"embed.res{layer}.out"
    assert names.film("film_enc", "gamma_mean") == "film_enc.gamma_mean"
    assert names.param("film_dec.device_embed") == "weights.film_dec.device_embed"
    assert names.cond("bands") == "cond.bands"


def test_forward_stages_name_the_last_embedding_unit_of_the_config():
    """The conv-embedding stage is the last dilated ResUnit's output, however many units the config has."""
    from nilmbuild.model.config import NILMFormerConfig

    for dilations in ((1, 2, 4, 8), (1, 2)):
        cfg = NILMFormerConfig(dilations=dilations)
        conv = next(s for s in forward.stages(cfg) if s["stage"] == "2")
        assert conv["records"] == [f"embed.res{len(dilations) - 1}.out"]
        assert forward.js_names(cfg)["anim"]["conv"][1] == conv["records"][0]
