"""Fulcrum's training worker: claims jobs from a Fulcrum server and trains PEFT LoRA adapters."""

__version__ = "0.1.0"
