package dev.fulcrum.inference.catalog;

import java.time.Instant;
import java.util.List;

/**
 * One replica of a catalog model's server as this gateway replica sees it: its base URL, its name (host and port, or
 * the address its host name resolved to), its weight, its state ({@code healthy}, {@code ejected} until
 * {@code ejectedUntil} for {@code ejectionReason}, {@code draining}), how often it was ejected in a row, its requests
 * under way, its recent latency in milliseconds (null before its first answer) and the LoRA adapters loaded on it.
 */
public record ServerReplica(String url, String name, int weight, String state, Instant ejectedUntil,
        String ejectionReason, int ejections, int inFlight, Double latencyMillis, List<String> adapters) {
}
