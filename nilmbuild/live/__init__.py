"""The live model: NILMFormer exported to ONNX for the pages (issue 11). See docs/live-model.md."""
