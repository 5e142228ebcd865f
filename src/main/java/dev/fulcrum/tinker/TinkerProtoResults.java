package dev.fulcrum.tinker;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.CodedOutputStream;

/**
 * The JSON results of a {@code forward}/{@code forward_backward} and of a sample as the protobuf messages the Tinker
 * SDK 0.2x and later asks for ({@code ForwardBackwardOutput}, {@code SampleResponse}); the messages' fields are listed
 * in {@link TinkerProto}.
 */
public final class TinkerProtoResults {

    private TinkerProtoResults() {
    }

    /**
     * A {@code forward}/{@code forward_backward} result ({@code {loss_fn_output_type, loss_fn_outputs: [{name:
     * TensorData}], metrics}}) as a {@code ForwardBackwardOutput}: one {@code ArrayRecord} of every datum, each field a
     * {@code BatchedTensor} of the datums' values one after the other.
     */
    public static byte[] forwardBackwardOutput(JsonNode result) {
        return write(out -> {
            String type = result.path("loss_fn_output_type").asText("ArrayRecord");
            out.writeString(1, type);
            JsonNode outputs = result.path("loss_fn_outputs");
            if (outputs.size() > 0) {
                Map<String, List<JsonNode>> fields = new LinkedHashMap<>();
                for (int i = 0; i < outputs.size(); i++) {
                    for (Iterator<Map.Entry<String, JsonNode>> it = outputs.get(i).fields(); it.hasNext();) {
                        Map.Entry<String, JsonNode> field = it.next();
                        fields.computeIfAbsent(field.getKey(), k -> new ArrayList<>()).add(field.getValue());
                    }
                }
                out.writeByteArray(2, record(type, fields, outputs.size()));
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = result.path("metrics").fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> metric = it.next();
                out.writeByteArray(3, write(entry -> {
                    entry.writeString(1, metric.getKey());
                    entry.writeDouble(2, metric.getValue().asDouble());
                }));
            }
        });
    }

    private static byte[] record(String type, Map<String, List<JsonNode>> fields, int datums) {
        return write(out -> {
            out.writeString(1, type);
            for (Map.Entry<String, List<JsonNode>> field : fields.entrySet()) {
                if (field.getValue().size() != datums) {
                    throw new IllegalStateException("Field " + field.getKey() + " is missing in some datums");
                }
                boolean floats = !field.getValue().get(0).path("dtype").asText("float32").equals("int64");
                int size = floats ? 4 : 8;
                ByteArrayOutputStream data = new ByteArrayOutputStream();
                ByteBuffer offsets = ByteBuffer.allocate(8 * (datums + 1)).order(ByteOrder.LITTLE_ENDIAN);
                offsets.putLong(0);
                for (JsonNode tensor : field.getValue()) {
                    JsonNode values = tensor.path("data");
                    ByteBuffer bytes = ByteBuffer.allocate(size * values.size()).order(ByteOrder.LITTLE_ENDIAN);
                    for (JsonNode value : values) {
                        if (floats) {
                            bytes.putFloat(value.floatValue());
                        } else {
                            bytes.putLong(value.longValue());
                        }
                    }
                    data.writeBytes(bytes.array());
                    offsets.putLong(data.size());
                }
                byte[] batched = write(tensor -> {
                    tensor.writeByteArray(1, data.toByteArray());
                    tensor.writeByteArray(2, offsets.array());
                    tensor.writeEnum(3, floats ? TinkerProto.FLOAT32 : TinkerProto.INT64);
                });
                out.writeByteArray(2, write(entry -> {
                    entry.writeString(1, field.getKey());
                    entry.writeByteArray(2, batched);
                }));
            }
            out.writeInt64(3, datums);
        });
    }

    /** The SDK's filler of an empty place in a {@code TopkLogprobs} row. */
    private static final float MASK_LOGPROB = -99999.0f;

    /**
     * A sample's result ({@code {sequences: [{tokens, logprobs, stop_reason, topk_logprobs?}], prompt_logprobs?,
     * topk_prompt_logprobs?, target_prompt_logprobs?}}) as a {@code SampleResponse}.
     */
    public static byte[] sampleResponse(JsonNode result) {
        return write(out -> {
            for (JsonNode sequence : result.path("sequences")) {
                out.writeByteArray(1, write(seq -> {
                    if (sequence.path("stop_reason").asText().equals("length")) {
                        seq.writeEnum(1, 1);
                    }
                    JsonNode tokens = sequence.path("tokens");
                    ByteBuffer ids = ByteBuffer.allocate(4 * tokens.size()).order(ByteOrder.LITTLE_ENDIAN);
                    tokens.forEach(token -> ids.putInt(token.intValue()));
                    seq.writeByteArray(2, ids.array());
                    if (sequence.has("logprobs")) {
                        seq.writeByteArray(3, floats(sequence.get("logprobs")));
                    }
                    if (sequence.has("topk_logprobs") && !sequence.get("topk_logprobs").isNull()) {
                        seq.writeByteArray(4, topk(sequence.get("topk_logprobs")));
                    }
                }));
            }
            if (result.has("prompt_logprobs") && !result.get("prompt_logprobs").isNull()) {
                out.writeByteArray(2, floats(result.get("prompt_logprobs")));
            }
            if (result.has("topk_prompt_logprobs") && !result.get("topk_prompt_logprobs").isNull()) {
                out.writeByteArray(3, topk(result.get("topk_prompt_logprobs")));
            }
            JsonNode targets = result.path("target_prompt_logprobs");
            if (targets.isObject()) {
                out.writeByteArray(5, denseFloats(targets));
            }
        });
    }

    /** A float32 TensorData {data, shape} as a dense {@code Tensor}: its values, dtype, shape (packed). */
    private static byte[] denseFloats(JsonNode tensor) {
        return write(out -> {
            out.writeByteArray(1, floats(tensor.path("data")));
            out.writeEnum(3, TinkerProto.FLOAT32);
            JsonNode shape = tensor.path("shape");
            int size = 0;
            for (JsonNode dimension : shape) {
                size += CodedOutputStream.computeInt64SizeNoTag(dimension.asLong());
            }
            out.writeTag(4, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
            out.writeUInt32NoTag(size);
            for (JsonNode dimension : shape) {
                out.writeInt64NoTag(dimension.asLong());
            }
        });
    }

    /** Per position null or a list of [token id, logprob], as a {@code TopkLogprobs} of k the longest list. */
    private static byte[] topk(JsonNode positions) {
        int k = 0;
        for (JsonNode position : positions) {
            k = Math.max(k, position.size());
        }
        int length = positions.size();
        ByteBuffer ids = ByteBuffer.allocate(4 * length * k).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer logprobs = ByteBuffer.allocate(4 * length * k).order(ByteOrder.LITTLE_ENDIAN);
        for (JsonNode position : positions) {
            for (int j = 0; j < k; j++) {
                JsonNode pair = position.path(j);
                ids.putInt(pair.isArray() ? pair.path(0).intValue() : 0);
                logprobs.putFloat(pair.isArray() ? pair.path(1).floatValue() : MASK_LOGPROB);
            }
        }
        int rows = k;
        return write(out -> {
            out.writeByteArray(1, ids.array());
            out.writeByteArray(2, logprobs.array());
            out.writeUInt32(3, rows);
            out.writeUInt32(4, length);
        });
    }

    /** float32 little-endian values; NaN for a null. */
    private static byte[] floats(JsonNode values) {
        ByteBuffer bytes = ByteBuffer.allocate(4 * values.size()).order(ByteOrder.LITTLE_ENDIAN);
        values.forEach(value -> bytes.putFloat(value.isNull() ? Float.NaN : value.floatValue()));
        return bytes.array();
    }

    private interface Writing {
        void to(CodedOutputStream out) throws IOException;
    }

    private static byte[] write(Writing writing) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        try {
            writing.to(out);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }
}
