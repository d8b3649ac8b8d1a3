"""Running compiled models: `CompiledModel` (numpy in, numpy out) and the registry of
execution backends behind it."""
