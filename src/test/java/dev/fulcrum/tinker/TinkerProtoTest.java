package dev.fulcrum.tinker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.http.ErrorResponses;

/**
 * {@link TinkerProto}: the bytes the tinker SDK 0.38.0 writes (its own {@code forward_backward_request_to_proto}, and
 * zstd-compressed as it compresses them) read into the JSON body of 0.18.2; results written as the protobuf messages it
 * reads; malformed bytes refused as 400s.
 */
class TinkerProtoTest {

    /**
     * tinker 0.38.0's {@code forward_backward_request_to_proto} of model {@code s1:train:0}, seq_id 3, one datum of
     * tokens 5 6 7, target_tokens 6 7 8, weights 1 0.5 0.25, loss {@code ppo} with {@code clip_low_threshold} 0.5, and
     * {@code forward_only}.
     */
    static final String SDK_REQUEST = "0a0a73313a747261696e3a3010031a640a100a0e0a0c050000000600000007000000121e0a0777"
            + "65696768747312130a0c0000803f0000003f0000803e180122010312300a0d7461726765745f746f6b656e73121f0a180600000000"
            + "000000070000000000000008000000000000001802220103220370706f2a1d0a12636c69705f6c6f775f7468726573686f6c641100"
            + "0000000000e03f30013a1f0a12636c69705f6c6f775f7468726573686f6c64120909000000000000e03f";
    /** The same, compressed as the SDK compresses it ({@code zstandard.ZstdCompressor().compress}). */
    static final String SDK_REQUEST_ZSTD = "28b52ffd20bbb5040082c81f2690471dffffffffbf1a3c244d9b018cc03eeaaedb15cb60aecd"
            + "d637e64b52d8127e47bad14e0172fb938419c73572bb21aae8542736f593d1eab9a8cac19b58d0eb7af1b908801fc065b85af341fb"
            + "e929615013b6e1e7a2830ded97ffa5f62b7be0da9344cd0c5905ff47fe0bfe07942decb211e22d8d635110d60ea3ee060800201844"
            + "d122201e188408220440c00504c10c";

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void readsTheSdksForwardBackwardRequestIntoTheJsonBody() throws Exception {
        byte[] bytes = HexFormat.of().parseHex(SDK_REQUEST);
        ObjectNode request = TinkerProto.forwardBackwardRequest(bytes);
        assertEquals(json.readTree("""
                {"model_id": "s1:train:0", "seq_id": 3, "forward_only": true,
                 "forward_backward_input": {
                   "data": [{"model_input": {"chunks": [{"type": "encoded_text", "tokens": [5, 6, 7]}]},
                             "loss_fn_inputs": {"weights": {"data": [1.0, 0.5, 0.25], "dtype": "float32", "shape": [3]},
                                                "target_tokens": {"data": [6, 7, 8], "dtype": "int64", "shape": [3]}}}],
                   "loss_fn": "ppo", "loss_fn_config": {"clip_low_threshold": 0.5}}}
                """), json.readTree(json.writeValueAsString(request)));
        // compressed: the same message
        byte[] zstd = HexFormat.of().parseHex(SDK_REQUEST_ZSTD);
        assertEquals(request, TinkerProto.forwardBackwardRequest(TinkerProto.unzstd(zstd, 1 << 20)));
    }

    @Test
    void malformedBodiesAre400sNamingTheBody() {
        byte[] bytes = HexFormat.of().parseHex(SDK_REQUEST);
        // cut short, a field of the wrong wire type, tokens that are not whole int32s, an unknown dtype
        for (byte[] bad : List.of(java.util.Arrays.copyOf(bytes, bytes.length / 2), new byte[] { 8, 1 },
                new byte[] { 0x1a, 7, 0x0a, 5, 0x0a, 3, 0x0a, 1, 5 },
                new byte[] { 0x1a, 9, 0x12, 7, 0x0a, 1, 'w', 0x12, 2, 0x18, 9 }, new byte[] { (byte) 0xff })) {
            ApiException refused = assertThrows(ApiException.class, () -> TinkerProto.forwardBackwardRequest(bad),
                    HexFormat.of().formatHex(bad));
            assertEquals(400, ErrorResponses.status(refused.kind()));
            assertEquals(List.of("body"), refused.violations().get(0).loc());
            assertEquals("protobuf_invalid", refused.violations().get(0).type());
        }
        ApiException notZstd = assertThrows(ApiException.class, () -> TinkerProto.unzstd(bytes, 1 << 20));
        assertEquals(400, ErrorResponses.status(notZstd.kind()));
        // decompressed beyond the limit: too large
        ApiException large = assertThrows(ApiException.class,
                () -> TinkerProto.unzstd(HexFormat.of().parseHex(SDK_REQUEST_ZSTD), 16));
        assertEquals(413, ErrorResponses.status(large.kind()));
        // unknown fields are skipped, as protobuf readers do
        ObjectNode request = TinkerProto.forwardBackwardRequest(new byte[] { (byte) 0xa0, 6, 1, 0x10, 4 });
        assertEquals(4, request.get("seq_id").asInt());
        assertFalse(request.has("forward_only"));
    }

    @Test
    void writesForwardBackwardOutputAsOneBatchedRecord() throws Exception {
        JsonNode result = json.readTree("""
                {"loss_fn_output_type": "ArrayRecord",
                 "loss_fn_outputs": [{"logprobs": {"data": [-1.5, -0.25], "dtype": "float32", "shape": [2]},
                                      "elementwise_loss": {"data": [1.5, 0.25], "dtype": "float32", "shape": [2]}},
                                     {"logprobs": {"data": [-3.0], "dtype": "float32", "shape": [1]},
                                      "elementwise_loss": {"data": [3.0], "dtype": "float32", "shape": [1]}}],
                 "metrics": {"loss:sum": 4.75, "ntokens:sum": 3.0}}
                """);
        Map<Integer, List<Object>> message = fields(TinkerProtoResults.forwardBackwardOutput(result));
        assertEquals("ArrayRecord", text(message.get(1).get(0)));
        assertEquals(1, message.get(2).size());
        Map<Integer, List<Object>> record = fields((byte[]) message.get(2).get(0));
        assertEquals(2L, record.get(3).get(0));
        Map<String, Map<Integer, List<Object>>> batched = new LinkedHashMap<>();
        for (Object entry : record.get(2)) {
            Map<Integer, List<Object>> e = fields((byte[]) entry);
            batched.put(text(e.get(1).get(0)), fields((byte[]) e.get(2).get(0)));
        }
        Map<Integer, List<Object>> logprobs = batched.get("logprobs");
        assertEquals(List.of(-1.5f, -0.25f, -3.0f), floats((byte[]) logprobs.get(1).get(0)));
        assertEquals(List.of(0L, 8L, 12L), longs((byte[]) logprobs.get(2).get(0)));
        assertEquals(1L, logprobs.get(3).get(0)); // float32
        assertEquals(List.of(1.5f, 0.25f, 3.0f), floats((byte[]) batched.get("elementwise_loss").get(1).get(0)));
        Map<String, Double> metrics = new LinkedHashMap<>();
        for (Object entry : message.get(3)) {
            Map<Integer, List<Object>> e = fields((byte[]) entry);
            metrics.put(text(e.get(1).get(0)), Double.longBitsToDouble((Long) e.get(2).get(0)));
        }
        assertEquals(Map.of("loss:sum", 4.75, "ntokens:sum", 3.0), metrics);
    }

    @Test
    void writesSampleResponses() throws Exception {
        JsonNode result = json.readTree(
                """
                        {"type": "sample", "sequences": [{"stop_reason": "length", "tokens": [7, 300000], "logprobs": [-0.5, -2.0],
                                                          "topk_logprobs": [[[7, -0.5], [8, -1.0]], [[11, -0.75], [300000, -2.0]]]},
                                                         {"stop_reason": "stop", "tokens": [2], "logprobs": [-0.125]}],
                         "prompt_logprobs": [null, -4.0, -1.0],
                         "topk_prompt_logprobs": [null, [[9, -0.25], [4, -4.0]], [[5, -1.0]]],
                         "target_prompt_logprobs": {"data": [-1.5, 0.0, -0.25, -3.0], "dtype": "float32", "shape": [2, 2]}}
                        """);
        Map<Integer, List<Object>> message = fields(TinkerProtoResults.sampleResponse(result));
        Map<Integer, List<Object>> first = fields((byte[]) message.get(1).get(0));
        assertEquals(1L, first.get(1).get(0)); // length
        ByteBuffer tokens = ByteBuffer.wrap((byte[]) first.get(2).get(0)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(7, tokens.getInt());
        assertEquals(300000, tokens.getInt());
        assertEquals(List.of(-0.5f, -2.0f), floats((byte[]) first.get(3).get(0)));
        // the sampled tokens' top-k: a TopkLogprobs of 2 positions x 2 in the SampledSequence (field 4)
        Map<Integer, List<Object>> sampledTop = fields((byte[]) first.get(4).get(0));
        assertEquals(List.of(2L, 2L), List.of(sampledTop.get(3).get(0), sampledTop.get(4).get(0)));
        assertEquals(List.of(7, 8, 11, 300000), ints((byte[]) sampledTop.get(1).get(0)));
        assertEquals(List.of(-0.5f, -1.0f, -0.75f, -2.0f), floats((byte[]) sampledTop.get(2).get(0)));
        Map<Integer, List<Object>> second = fields((byte[]) message.get(1).get(1));
        assertFalse(second.containsKey(1)); // stop: the enum's default, not written
        assertFalse(second.containsKey(4)); // no top-k asked
        List<Float> prompt = floats((byte[]) message.get(2).get(0));
        assertTrue(prompt.get(0).isNaN());
        assertEquals(-4.0f, prompt.get(1));
        // TopkLogprobs: 3 positions x 2, row by row, an empty place token 0 with the SDK's mask -99999
        Map<Integer, List<Object>> top = fields((byte[]) message.get(3).get(0));
        assertEquals(List.of(2L, 3L), List.of(top.get(3).get(0), top.get(4).get(0)));
        assertEquals(List.of(0, 0, 9, 4, 5, 0), ints((byte[]) top.get(1).get(0)));
        assertEquals(List.of(-99999f, -99999f, -0.25f, -4.0f, -1.0f, -99999f), floats((byte[]) top.get(2).get(0)));
        // target_prompt_logprobs (field 5): a dense float32 Tensor of shape [2, 2], the bytes the SDK's own encoder
        // writes for it (public_pb.Tensor(dense=..., dtype=DTYPE_FLOAT32, shape=[2, 2]).SerializeToString())
        assertEquals("0a100000c0bf00000000000080be000040c0180122020202",
                HexFormat.of().formatHex((byte[]) message.get(5).get(0)));
    }

    @Test
    void aSampleWithoutTargetsWritesNoTargetField() throws Exception {
        JsonNode result = json.readTree("""
                {"type": "sample", "sequences": [{"stop_reason": "stop", "tokens": [2], "logprobs": [-0.125]}],
                 "prompt_logprobs": [null, null, -1.0]}
                """);
        Map<Integer, List<Object>> message = fields(TinkerProtoResults.sampleResponse(result));
        assertFalse(message.containsKey(5));
        // positions not scored (before prompt_logprobs_last_n's): NaN, which the SDK reads as None
        List<Float> prompt = floats((byte[]) message.get(2).get(0));
        assertTrue(prompt.get(0).isNaN() && prompt.get(1).isNaN());
        assertEquals(-1.0f, prompt.get(2));
    }

    /** A message's fields by number: varints and fixed64s as longs, length-delimited ones as bytes. */
    private static Map<Integer, List<Object>> fields(byte[] bytes) throws IOException {
        Map<Integer, List<Object>> fields = new LinkedHashMap<>();
        CodedInputStream in = CodedInputStream.newInstance(bytes);
        for (int tag; (tag = in.readTag()) != 0;) {
            Object value = switch (WireFormat.getTagWireType(tag)) {
                case WireFormat.WIRETYPE_VARINT -> in.readInt64();
                case WireFormat.WIRETYPE_FIXED64 -> in.readFixed64();
                case WireFormat.WIRETYPE_LENGTH_DELIMITED -> in.readByteArray();
                default -> throw new AssertionError("wire type " + WireFormat.getTagWireType(tag));
            };
            fields.computeIfAbsent(WireFormat.getTagFieldNumber(tag), k -> new ArrayList<>()).add(value);
        }
        return fields;
    }

    private static String text(Object bytes) {
        return new String((byte[]) bytes, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static List<Float> floats(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        List<Float> values = new ArrayList<>();
        while (buffer.hasRemaining()) {
            values.add(buffer.getFloat());
        }
        return values;
    }

    private static List<Integer> ints(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        List<Integer> values = new ArrayList<>();
        while (buffer.hasRemaining()) {
            values.add(buffer.getInt());
        }
        return values;
    }

    private static List<Long> longs(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        List<Long> values = new ArrayList<>();
        while (buffer.hasRemaining()) {
            values.add(buffer.getLong());
        }
        return values;
    }
}
