/**
 * Models by name: GGUF files pulled from the Hugging Face Hub's HTTP API (the listing, {@link HubClient}; resumable
 * downloads, {@link HubDownloads}; what both share, {@link HubHttp}) into the data directory, stored by sha256 once the
 * digest the Hub states for them checks ({@link PulledFiles}), with their progress told as they go
 * ({@link PullProgress}); {@link ModelPulls} runs the pulls. The catalog serves a pulled model once its pull is ready;
 * this package knows nothing of the catalog.
 */
package dev.fulcrum.inference.hub;
