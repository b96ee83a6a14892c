"""The conformance suite: what every registered game and variant must satisfy."""
