package dev.fulcrum.inference;

import java.util.List;

/**
 * A model chat completions can use: its id, its {@code root} in the model list, the backend answering for it, and the
 * models that answer instead when it cannot ({@code fallbacks}, in order; see the gateway).
 */
public record ServedModel(String id, String root, Backend backend, List<String> fallbacks) {

    public ServedModel {
        fallbacks = fallbacks == null ? List.of() : List.copyOf(fallbacks);
    }

    public ServedModel(String id, String root, Backend backend) {
        this(id, root, backend, List.of());
    }
}
