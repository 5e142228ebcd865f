package dev.fulcrum.tinker;

import java.io.IOException;
import java.io.InputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Type;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.MessageBodyReader;
import jakarta.ws.rs.ext.Provider;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.FulcrumConfig;

/**
 * Reads the one protobuf request body of the Tinker API, {@code forward_backward}'s {@code ForwardBackwardRequest} (the
 * only operation whose contract takes {@code application/x-protobuf}), into the JSON body the operation checks and runs
 * ({@link TinkerProto#forwardBackwardRequest}); decompressed first when it says {@code Content-Encoding: zstd} (at most
 * {@code fulcrum.max-json-request-bytes} once decompressed, as a JSON body). Other encodings are a 400.
 */
@Provider
@Consumes(TinkerProto.MEDIA_TYPE)
public class TinkerProtoReader implements MessageBodyReader<ObjectNode> {

    /** Looked up per request: providers are created before run-time configuration exists. */
    @Inject
    Instance<FulcrumConfig> config;

    @Override
    public boolean isReadable(Class<?> type, Type genericType, Annotation[] annotations, MediaType mediaType) {
        return type == ObjectNode.class && mediaType != null
                && mediaType.isCompatible(MediaType.valueOf(TinkerProto.MEDIA_TYPE));
    }

    @Override
    public ObjectNode readFrom(Class<ObjectNode> type, Type genericType, Annotation[] annotations, MediaType mediaType,
            MultivaluedMap<String, String> headers, InputStream entity) throws IOException {
        long max = config.get().maxJsonRequestBytes();
        byte[] body = entity.readNBytes((int) Math.min(max + 1, Integer.MAX_VALUE - 8));
        String encoding = headers.getFirst("Content-Encoding");
        if (encoding != null && !encoding.isBlank() && !encoding.strip().equalsIgnoreCase("identity")) {
            if (!encoding.strip().equalsIgnoreCase("zstd")) {
                throw TinkerProto.malformed("Content-Encoding " + encoding + " is not served (zstd or none)");
            }
            body = TinkerProto.unzstd(body, max);
        }
        return TinkerProto.forwardBackwardRequest(body);
    }
}
