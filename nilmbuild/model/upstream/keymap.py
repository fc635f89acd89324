"""The one key map between the upstream state_dicts and UpstreamNILMFormer's.

Most names are the upstream's own (EmbedBlock, ProjEmbedding, ProjStats1/2, encoder_layers, final_norm,
SharedHead, device_adapters, PowerHead, GateHead, sparse_cnn.simple_head.*, DownstreamTaskHead, criterion.*).
The rest differ because nilmbuild shares its spec trunk modules, whose names the pages already use:

  upstream                                   nilmbuild
  EmbedBlock.network.{i}.layers.0.*          stem.EmbedBlock.units.{i}.conv.*   (dilated conv)
  EmbedBlock.network.{i}.layers.2.*          stem.EmbedBlock.units.{i}.bn.*     (BatchNorm)
  EmbedBlock.network.{i}.conv.*              stem.EmbedBlock.units.{i}.residual.*
  ProjEmbedding.*, ProjStats1.*              stem.ProjEmbedding.*, stem.ProjStats1.*
  encoder_layers.{i}.attention_layer.*       encoder_layers.{i}.attn.*
  EncoderBlock.{i}.* (original), i < n       encoder_layers.{i}.*  (attention_layer -> attn as above)
  EncoderBlock.{n}.* (original)              final_norm.*
  encoder_device_embed / encoder_film_fc1|2  encoder_film.gen.device_embed / fc1 / fc2
  device_embed / film_fc1|2                  decoder_film.gen.device_embed / fc1 / fc2
  SharedHead, device_adapters, PowerHead,    head.<same>
  GateHead, type_power_heads, type_gate_heads
  DownstreamTaskHead                         head.DownstreamTaskHead
"""

from __future__ import annotations

import re

_RULES = (
    (r"^EmbedBlock\.network\.(\d+)\.layers\.0\.", r"stem.EmbedBlock.units.\1.conv."),
    (r"^EmbedBlock\.network\.(\d+)\.layers\.2\.", r"stem.EmbedBlock.units.\1.bn."),
    (r"^EmbedBlock\.network\.(\d+)\.conv\.", r"stem.EmbedBlock.units.\1.residual."),
    (r"^(ProjEmbedding|ProjStats1)\.", r"stem.\1."),
    (r"^encoder_layers\.(\d+)\.attention_layer\.", r"encoder_layers.\1.attn."),
    (r"^encoder_device_embed\.", "encoder_film.gen.device_embed."),
    (r"^encoder_film_fc([12])\.", r"encoder_film.gen.fc\1."),
    (r"^device_embed\.", "decoder_film.gen.device_embed."),
    (r"^film_fc([12])\.", r"decoder_film.gen.fc\1."),
    (r"^(SharedHead|device_adapters|PowerHead|GateHead|type_power_heads|type_gate_heads)\.", r"head.\1."),
    (r"^DownstreamTaskHead\.", "head.DownstreamTaskHead."),
)


def _encoder_block(key: str, n_layers: int) -> str:
    """The original's EncoderBlock (n layers + the final LayerNorm in one Sequential)."""
    m = re.match(r"^EncoderBlock\.(\d+)\.(.*)$", key)
    if not m:
        return key
    i, rest = int(m.group(1)), m.group(2)
    return f"final_norm.{rest}" if i == n_layers else f"encoder_layers.{i}.{rest}"


def to_nilmbuild(key: str, n_layers: int) -> str:
    """One upstream state_dict key -> the UpstreamNILMFormer key."""
    key = _encoder_block(key, n_layers)
    for pattern, repl in _RULES:  # anchored: a mapped key never matches a later rule again
        key = re.sub(pattern, repl, key)
    return key


def map_state_dict(state_dict: dict, n_layers: int) -> dict:
    return {to_nilmbuild(k, n_layers): v for k, v in state_dict.items()}
