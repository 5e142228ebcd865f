package dev.fulcrum.platform.json;

import jakarta.inject.Inject;
import jakarta.ws.rs.ext.ContextResolver;
import jakarta.ws.rs.ext.Provider;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The mapper of the JAX-RS interfaces' request and response bodies: the application's mapper (with {@link JsonInput}'s
 * bounds) that also refuses in what it reads text the database cannot store ({@link StorableText}) and null items of
 * lists ({@link NullItems}). Other JSON (the inference gateway's passthrough, upstream answers, stored JSON) is read by
 * the application's mapper, where both are allowed.
 */
@Provider
public class RequestJson implements ContextResolver<ObjectMapper> {

    private final ObjectMapper bodies;

    @Inject
    public RequestJson(ObjectMapper json) {
        this.bodies = json.copy().registerModule(StorableText.bodies()).registerModule(NullItems.module());
    }

    @Override
    public ObjectMapper getContext(Class<?> type) {
        return bodies;
    }
}
