/**
 * OpenAI-compatible inference. This package holds what its parts share: the requests, the exchange a backend answers
 * ({@link dev.fulcrum.inference.Exchange}), the {@link dev.fulcrum.inference.Backend} interfaces, the errors and the
 * configuration. The parts: {@code gateway} (the HTTP doors, callers, limits, quotas, usage), {@code catalog} (the
 * models, and trained checkpoints as models) and {@code engine} (where models run: {@code upstream}, {@code llama},
 * {@code builtin}, {@code embedding}). The gateway finds models in the catalog; engines serve the catalog's models
 * through its {@link dev.fulcrum.inference.catalog.Engine} interface; nothing here imports the gateway.
 */
package dev.fulcrum.inference;
