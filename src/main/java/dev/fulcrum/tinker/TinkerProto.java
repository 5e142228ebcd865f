package dev.fulcrum.tinker;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;

import io.airlift.compress.zstd.ZstdInputStream;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The protobuf bodies of the Tinker SDK 0.2x and later (Tinker's public protocol, package {@code tinker_public}): its
 * {@code ForwardBackwardRequest} read into the JSON body the SDK 0.18 sends (so both are checked and run alike), and
 * (in {@link TinkerProtoResults}) the JSON results of a {@code forward}/{@code forward_backward} and of a sample
 * written as the {@code ForwardBackwardOutput} and {@code SampleResponse} it asks for. Only the wire format is used
 * (protobuf-java's coded streams); the field numbers are the protocol's:
 *
 * <pre>
 * ForwardBackwardRequest: 1 model_id string, 2 seq_id int32, 3 data Datum*, 4 loss_fn string,
 *   5 loss_fn_config map&lt;string, double&gt;, 6 forward_only bool, 7 loss_fn_config_v2 map&lt;string, LossConfigValue&gt;
 * LossConfigValue: oneof 1 number double, 2 text string
 * Datum: 1 model_input Chunk*, 2 loss_fn_inputs map&lt;string, Tensor&gt;, 3 model_input_spans*, 4 loss_fn_input_spans*
 * Chunk: oneof 1 encoded_text {1 tokens: int32 little-endian}, 2 image, 3 dmel
 * Tensor: oneof 1 dense bytes, 2 sparse_csr {1 values, 2 crow_indices, 3 col_indices: int64}; 3 dtype, 4 shape int64*
 * DType: 1 float32, 2 int64, 3 int32, 4 bfloat16 (little-endian)
 * ForwardBackwardOutput: 1 loss_fn_output_type string, 2 loss_fn_outputs ArrayRecord*, 3 metrics map&lt;string, double&gt;
 * ArrayRecord: 1 type_tag string, 2 fields map&lt;string, BatchedTensor&gt;, 3 num_datums int64
 * BatchedTensor: 1 data bytes (the datums' values one after the other), 2 offsets (int64 byte offsets, one more than
 *   datums), 3 dtype, 4 trailing_shape int64*
 * SampleResponse: 1 sequences SampledSequence*, 2 prompt_logprobs float32 bytes (NaN where none),
 *   3 topk_prompt_logprobs TopkLogprobs, 5 target_prompt_logprobs Tensor (dense float32)
 * TopkLogprobs: 1 token_ids int32 bytes, 2 logprobs float32 bytes (both length x k, row by row; an empty place is
 *   token 0 with logprob -99999), 3 k, 4 length
 * SampledSequence: 1 stop_reason (0 stop, 1 length), 2 tokens int32 bytes, 3 logprobs float32 bytes,
 *   4 topk_sampled_logprobs TopkLogprobs
 * </pre>
 */
public final class TinkerProto {

    public static final String MEDIA_TYPE = "application/x-protobuf";

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    static final int FLOAT32 = 1;
    static final int INT64 = 2;
    private static final int INT32 = 3;
    private static final int BFLOAT16 = 4;

    private TinkerProto() {
    }

    /** A body that is not the message it should be: 400, naming what was wrong. */
    static ApiException malformed(String message) {
        return ApiException.badRequest(List.of(Violation.of(message, "protobuf_invalid", "body")));
    }

    /**
     * A zstd-compressed body, decompressed; at most {@code max} bytes of it (413 beyond), 400 when it is not zstd.
     */
    public static byte[] unzstd(byte[] body, long max) {
        try (InputStream in = new ZstdInputStream(new ByteArrayInputStream(body))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[65536];
            for (int n; (n = in.read(buffer)) > 0;) {
                out.write(buffer, 0, n);
                if (out.size() > max) {
                    throw ApiException.payloadTooLarge("Request body larger than " + max + " bytes once decompressed");
                }
            }
            return out.toByteArray();
        } catch (IOException | RuntimeException e) {
            if (e instanceof ApiException api) {
                throw api;
            }
            throw malformed("The body is not zstd (Content-Encoding: zstd): " + e.getMessage());
        }
    }

    /**
     * A {@code ForwardBackwardRequest} as the JSON body of a {@code forward_backward} ({@code {model_id, seq_id,
     * forward_backward_input: {data, loss_fn, loss_fn_config}}}), with {@code forward_only: true} when the message asks
     * for a forward only. 400 for bytes that are not such a message; what the message says is checked afterwards as the
     * JSON body is.
     */
    public static ObjectNode forwardBackwardRequest(byte[] body) {
        try {
            ObjectNode request = JSON.objectNode();
            ObjectNode input = JSON.objectNode();
            ArrayNode data = input.putArray("data");
            ObjectNode config = JSON.objectNode();
            ObjectNode configV2 = JSON.objectNode();
            CodedInputStream in = CodedInputStream.newInstance(body);
            for (int tag; (tag = in.readTag()) != 0;) {
                switch (field(tag)) {
                    case 1 ->
                            request.put("model_id", expect(in, tag, WireFormat.WIRETYPE_LENGTH_DELIMITED).readString());
                    case 2 -> request.put("seq_id", expect(in, tag, WireFormat.WIRETYPE_VARINT).readInt32());
                    case 3 -> data.add(datum(expect(in, tag, WireFormat.WIRETYPE_LENGTH_DELIMITED).readByteArray()));
                    case 4 -> input.put("loss_fn", expect(in, tag, WireFormat.WIRETYPE_LENGTH_DELIMITED).readString());
                    case 5 -> {
                        CodedInputStream entry = message(in, tag);
                        String key = "";
                        double value = 0;
                        for (int t; (t = entry.readTag()) != 0;) {
                            switch (field(t)) {
                                case 1 -> key = expect(entry, t, WireFormat.WIRETYPE_LENGTH_DELIMITED).readString();
                                case 2 -> value = expect(entry, t, WireFormat.WIRETYPE_FIXED64).readDouble();
                                default -> entry.skipField(t);
                            }
                        }
                        config.put(key, value);
                    }
                    case 6 -> {
                        if (expect(in, tag, WireFormat.WIRETYPE_VARINT).readBool()) {
                            request.put("forward_only", true);
                        }
                    }
                    case 7 -> {
                        CodedInputStream entry = message(in, tag);
                        String key = "";
                        JsonNode value = JSON.nullNode();
                        for (int t; (t = entry.readTag()) != 0;) {
                            switch (field(t)) {
                                case 1 -> key = expect(entry, t, WireFormat.WIRETYPE_LENGTH_DELIMITED).readString();
                                case 2 -> value = configValue(message(entry, t));
                                default -> entry.skipField(t);
                            }
                        }
                        configV2.set(key, value);
                    }
                    default -> in.skipField(tag);
                }
            }
            // the SDK writes numbers into both maps and text only into the second, which wins
            config.setAll(configV2);
            if (!config.isEmpty()) {
                input.set("loss_fn_config", config);
            }
            request.set("forward_backward_input", input);
            return request;
        } catch (IOException e) {
            throw malformed("The body is not a ForwardBackwardRequest message: " + e.getMessage());
        }
    }

    private static JsonNode configValue(CodedInputStream in) throws IOException {
        JsonNode value = JSON.nullNode();
        for (int tag; (tag = in.readTag()) != 0;) {
            switch (field(tag)) {
                case 1 -> value = JSON.numberNode(expect(in, tag, WireFormat.WIRETYPE_FIXED64).readDouble());
                case 2 -> value = JSON.textNode(expect(in, tag, WireFormat.WIRETYPE_LENGTH_DELIMITED).readString());
                default -> in.skipField(tag);
            }
        }
        return value;
    }

    private static ObjectNode datum(byte[] bytes) throws IOException {
        ObjectNode datum = JSON.objectNode();
        ArrayNode chunks = datum.putObject("model_input").putArray("chunks");
        ObjectNode inputs = datum.putObject("loss_fn_inputs");
        CodedInputStream in = CodedInputStream.newInstance(bytes);
        for (int tag; (tag = in.readTag()) != 0;) {
            switch (field(tag)) {
                case 1 -> chunks.add(chunk(message(in, tag)));
                case 2 -> {
                    CodedInputStream entry = message(in, tag);
                    String key = "";
                    ObjectNode tensor = null;
                    for (int t; (t = entry.readTag()) != 0;) {
                        switch (field(t)) {
                            case 1 -> key = expect(entry, t, WireFormat.WIRETYPE_LENGTH_DELIMITED).readString();
                            case 2 -> tensor = tensor(message(entry, t));
                            default -> entry.skipField(t);
                        }
                    }
                    inputs.set(key, tensor == null ? JSON.nullNode() : tensor);
                }
                // provenance spans (StableReinforce): kept in the JSON body, where they are refused
                case 3 -> {
                    message(in, tag);
                    datum.withArray("model_input_spans").addObject();
                }
                case 4 -> {
                    message(in, tag);
                    datum.withArray("loss_fn_input_spans").addObject();
                }
                default -> in.skipField(tag);
            }
        }
        return datum;
    }

    private static ObjectNode chunk(CodedInputStream in) throws IOException {
        ObjectNode chunk = JSON.objectNode();
        for (int tag; (tag = in.readTag()) != 0;) {
            switch (field(tag)) {
                case 1 -> {
                    chunk.removeAll();
                    chunk.put("type", "encoded_text");
                    ArrayNode tokens = chunk.putArray("tokens");
                    CodedInputStream text = message(in, tag);
                    for (int t; (t = text.readTag()) != 0;) {
                        if (field(t) == 1) {
                            ByteBuffer values = little(
                                    expect(text, t, WireFormat.WIRETYPE_LENGTH_DELIMITED).readByteArray(), 4,
                                    "encoded_text tokens");
                            tokens.removeAll();
                            while (values.hasRemaining()) {
                                tokens.add(values.getInt());
                            }
                        } else {
                            text.skipField(t);
                        }
                    }
                }
                case 2 -> {
                    message(in, tag);
                    chunk.removeAll();
                    chunk.put("type", "image");
                }
                case 3 -> {
                    message(in, tag);
                    chunk.removeAll();
                    chunk.put("type", "dmel");
                }
                default -> in.skipField(tag);
            }
        }
        if (chunk.isEmpty()) {
            throw malformed("A Chunk without encoded_text, image or dmel");
        }
        return chunk;
    }

    /** A {@code Tensor} as the SDK 0.18's {@code TensorData}: {@code {data, dtype, shape}}. */
    private static ObjectNode tensor(CodedInputStream in) throws IOException {
        byte[] dense = null;
        byte[][] sparse = null;
        int dtype = 0;
        List<Long> shape = new ArrayList<>();
        for (int tag; (tag = in.readTag()) != 0;) {
            switch (field(tag)) {
                case 1 -> {
                    dense = expect(in, tag, WireFormat.WIRETYPE_LENGTH_DELIMITED).readByteArray();
                    sparse = null;
                }
                case 2 -> {
                    sparse = new byte[3][];
                    dense = null;
                    CodedInputStream csr = message(in, tag);
                    for (int t; (t = csr.readTag()) != 0;) {
                        int f = field(t);
                        if (f >= 1 && f <= 3) {
                            sparse[f - 1] = expect(csr, t, WireFormat.WIRETYPE_LENGTH_DELIMITED).readByteArray();
                        } else {
                            csr.skipField(t);
                        }
                    }
                }
                case 3 -> dtype = expect(in, tag, WireFormat.WIRETYPE_VARINT).readEnum();
                case 4 -> {
                    if (WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                        CodedInputStream packed = CodedInputStream.newInstance(in.readByteArray());
                        while (!packed.isAtEnd()) {
                            shape.add(packed.readInt64());
                        }
                    } else {
                        shape.add(expect(in, tag, WireFormat.WIRETYPE_VARINT).readInt64());
                    }
                }
                default -> in.skipField(tag);
            }
        }
        ObjectNode tensor = JSON.objectNode();
        byte[] values = dense != null ? dense : sparse != null && sparse[0] != null ? sparse[0] : new byte[0];
        ArrayNode data = tensor.putArray("data");
        switch (dtype) {
            case FLOAT32 -> {
                ByteBuffer buffer = little(values, 4, "float32 tensor");
                while (buffer.hasRemaining()) {
                    data.add(buffer.getFloat());
                }
            }
            case BFLOAT16 -> {
                ByteBuffer buffer = little(values, 2, "bfloat16 tensor");
                while (buffer.hasRemaining()) {
                    data.add(Float.intBitsToFloat((buffer.getShort() & 0xffff) << 16));
                }
            }
            case INT64 -> {
                ByteBuffer buffer = little(values, 8, "int64 tensor");
                while (buffer.hasRemaining()) {
                    data.add(buffer.getLong());
                }
            }
            case INT32 -> {
                ByteBuffer buffer = little(values, 4, "int32 tensor");
                while (buffer.hasRemaining()) {
                    data.add(buffer.getInt());
                }
            }
            default -> throw malformed("A Tensor of an unknown dtype " + dtype);
        }
        tensor.put("dtype", dtype == FLOAT32 || dtype == BFLOAT16 ? "float32" : "int64");
        if (!shape.isEmpty()) {
            ArrayNode dims = tensor.putArray("shape");
            shape.forEach(dims::add);
        }
        if (sparse != null) {
            // sparse tensors are refused as the JSON body's are: by their indices
            tensor.set("sparse_crow_indices", longs(sparse[1]));
            tensor.set("sparse_col_indices", longs(sparse[2]));
        }
        return tensor;
    }

    private static ArrayNode longs(byte[] bytes) {
        ArrayNode values = JSON.arrayNode();
        ByteBuffer buffer = little(bytes == null ? new byte[0] : bytes, 8, "sparse indices");
        while (buffer.hasRemaining()) {
            values.add(buffer.getLong());
        }
        return values;
    }

    private static ByteBuffer little(byte[] bytes, int size, String what) {
        if (bytes.length % size != 0) {
            throw malformed("The bytes of an " + what + " are not a whole number of " + size + "-byte values");
        }
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static int field(int tag) {
        return WireFormat.getTagFieldNumber(tag);
    }

    private static CodedInputStream expect(CodedInputStream in, int tag, int wireType) throws IOException {
        if (WireFormat.getTagWireType(tag) != wireType) {
            throw malformed("Field " + field(tag) + " has wire type " + WireFormat.getTagWireType(tag)
                    + ", not the protocol's " + wireType);
        }
        return in;
    }

    private static CodedInputStream message(CodedInputStream in, int tag) throws IOException {
        return CodedInputStream.newInstance(expect(in, tag, WireFormat.WIRETYPE_LENGTH_DELIMITED).readByteArray());
    }
}
