package dev.fulcrum.console;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The bodies of API operations that answer a stream (JSON Lines, or JSON written as it is read) rather than a model:
 * the console writes them out in memory, a page's worth, and reads them with the application's JSON mapper.
 */
final class ApiBodies {

    private ApiBodies() {
    }

    static byte[] bytes(Response response) {
        Object entity = response.getEntity();
        if (entity instanceof byte[] raw) {
            return raw;
        }
        if (entity instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        if (entity instanceof StreamingOutput stream) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try {
                stream.write(out);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return out.toByteArray();
        }
        throw new IllegalStateException("Unexpected answer " + entity);
    }

    /** A JSON answer as {@code type}, whether the operation answered the model itself or its JSON. */
    static <T> T json(ObjectMapper mapper, Response response, Class<T> type) {
        if (type.isInstance(response.getEntity())) {
            return type.cast(response.getEntity());
        }
        try {
            return mapper.readValue(bytes(response), type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A JSON Lines answer, one {@code type} a line. */
    static <T> List<T> lines(ObjectMapper mapper, Response response, Class<T> type) {
        List<T> items = new ArrayList<>();
        for (String line : new String(bytes(response), StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                try {
                    items.add(mapper.readValue(line, type));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return items;
    }
}
