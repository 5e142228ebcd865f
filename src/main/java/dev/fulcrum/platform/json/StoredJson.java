package dev.fulcrum.platform.json;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** JSON values kept as text in the database (jsonb and text columns). */
@ApplicationScoped
public class StoredJson {

    @Inject
    ObjectMapper json;

    public String write(JsonNode value) {
        try {
            return json.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
    }

    public ObjectNode readObject(String text) {
        try {
            return (ObjectNode) json.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Stored JSON is not readable", e);
        }
    }
}
