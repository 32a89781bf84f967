"""Escoba Arena: a tournament runner for Escoba bots written in any language."""

__version__ = "0.1.0"
