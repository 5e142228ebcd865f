package dev.fulcrum.automations;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** Signature checks as a receiver writes them, independent of the sender's code. */
final class Signatures {

    private Signatures() {
    }

    static byte[] hmacSha256(byte[] key, byte[] content) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(content);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code X-Service-Signature}: hex HMAC-SHA256 of the body keyed with the secret as given. */
    static String serviceSignature(String secret, byte[] body) {
        return HexFormat.of().formatHex(hmacSha256(secret.getBytes(StandardCharsets.UTF_8), body));
    }

    /** Standard Webhooks: {@code v1,base64(HMAC(key, id.timestamp.body))}, key from a {@code whsec_} secret. */
    static String standardSignature(String secret, String id, String timestamp, byte[] body) {
        byte[] key = secret.startsWith("whsec_") ? Base64.getDecoder().decode(secret.substring(6))
                : secret.getBytes(StandardCharsets.UTF_8);
        String signed = id + "." + timestamp + "." + new String(body, StandardCharsets.UTF_8);
        return "v1," + Base64.getEncoder().encodeToString(hmacSha256(key, signed.getBytes(StandardCharsets.UTF_8)));
    }
}
