"""Import checkpoints trained with the upstream code (CondiNILM, the original NILMFormer) into nilmbuild.

reading.py (weights-only loading, file identity) -> detect.py (which upstream, where its weights are) ->
upstream_config.py (`--config`) + scaler_fields.py (`--scaler`) -> run.py (checks, build, atomic write) with
provenance.py; cli.py is `nilmbuild import`. The architectures themselves live in nilmbuild.model.upstream.
"""
