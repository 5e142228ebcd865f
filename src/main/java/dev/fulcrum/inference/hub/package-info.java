/**
 * Models by name: GGUF files pulled from the Hugging Face Hub's HTTP API ({@link HubClient}) into the data directory,
 * stored by sha256 once the digest the Hub states for them checks ({@link ModelPulls}). The catalog serves a pulled
 * model once its pull is ready; this package knows nothing of the catalog.
 */
package dev.fulcrum.inference.hub;
