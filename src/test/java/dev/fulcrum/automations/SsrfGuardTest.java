package dev.fulcrum.automations;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.fulcrum.platform.errors.ApiException;

/** The guard's decisions, without the server: the default settings refuse loopback (tests allow-list it). */
class SsrfGuardTest {

    private final SsrfGuard strict = new SsrfGuard(false, List.of());
    private final SsrfGuard loopbackAllowed = new SsrfGuard(true, List.of("127.0.0.0/8", "::1/128"));

    private String refusal(SsrfGuard guard, String literal) throws Exception {
        return guard.refusal(InetAddress.getByName(literal));
    }

    @Test
    void refusesInternalAddresses() throws Exception {
        String[][] cases = { { "127.0.0.1", "loopback" }, { "127.255.0.9", "loopback" }, { "0.0.0.0", "unspecified" },
                { "10.1.2.3", "private" }, { "172.16.0.1", "private" }, { "172.31.255.255", "private" },
                { "192.168.1.1", "private" }, { "169.254.169.254", "metadata" }, { "169.254.1.1", "link-local" },
                { "100.64.0.1", "carrier-grade" }, { "100.127.255.255", "carrier-grade" }, { "224.0.0.1", "multicast" },
                { "255.255.255.255", "broadcast" }, { "240.0.0.1", "reserved" }, { "::1", "loopback" },
                { "::", "unspecified" }, { "fc00::1", "unique-local" }, { "fd12:3456::1", "unique-local" },
                { "fe80::1", "link-local" }, { "ff02::1", "multicast" }, { "::ffff:169.254.169.254", "metadata" },
                { "::ffff:10.0.0.1", "private" }, { "::127.0.0.1", "loopback" }, { "64:ff9b::7f00:1", "loopback" },
                { "64:ff9b::a9fe:a9fe", "metadata" }, { "64:ff9b:1::a00:1", "private" },
                { "2002:c0a8:101::1", "private" }, { "fd00:ec2::254", "unique-local" } };
        for (String[] c : cases) {
            String reason = refusal(strict, c[0]);
            assertTrue(reason != null && reason.contains(c[1]), c[0] + " -> " + reason);
        }
    }

    @Test
    void acceptsPublicAddresses() throws Exception {
        for (String ip : new String[] { "8.8.8.8", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111",
                "64:ff9b::808:808", "::ffff:1.1.1.1" }) {
            assertNull(refusal(strict, ip), ip);
        }
    }

    @Test
    void theAllowListAdmitsItsNetworksOnly() throws Exception {
        assertNull(refusal(loopbackAllowed, "127.0.0.1"));
        assertNull(refusal(loopbackAllowed, "::1"));
        assertNull(refusal(loopbackAllowed, "::ffff:127.0.0.1"));
        assertTrue(refusal(loopbackAllowed, "10.0.0.1").contains("private"));
        assertTrue(refusal(loopbackAllowed, "169.254.169.254").contains("metadata"));
    }

    @Test
    void aHostNameResolvingToLoopbackIsRefused() {
        SsrfGuard.Refused refused = assertThrows(SsrfGuard.Refused.class,
                () -> strict.resolve("https://localhost:8443/hook"));
        assertTrue(refused.getMessage().contains("loopback"), refused.getMessage());
        assertTrue(refused.getMessage().contains("localhost"), refused.getMessage());
    }

    @Test
    void rawIpUrlsAreRefusedWhenSavedAndWhenSent() {
        for (String url : new String[] { "https://127.0.0.1/x", "https://169.254.169.254/latest/meta-data",
                "https://[::1]:8443/", "https://[::ffff:10.0.0.1]/", "https://10.0.0.1/" }) {
            ApiException e = assertThrows(ApiException.class, () -> strict.checkUrl(url, "body", "url"), url);
            assertEquals(ApiException.Kind.INVALID, e.kind());
            assertThrows(SsrfGuard.Refused.class, () -> strict.resolve(url), url);
        }
    }

    @Test
    void theCheckedAddressIsTheOneConnectedTo() throws Exception {
        SsrfGuard.Target target = loopbackAllowed.resolve("http://localhost:9/hook?x=1");
        assertTrue(target.address().isLoopbackAddress());
        assertEquals("localhost", target.host());
        assertEquals(9, target.port());
        assertEquals("/hook?x=1", target.requestUri());
    }

    @Test
    void urlRules() {
        assertThrows(ApiException.class, () -> strict.checkUrl("http://example.com/", "url"));
        assertThrows(ApiException.class, () -> strict.checkUrl("ftp://example.com/", "url"));
        assertThrows(ApiException.class, () -> strict.checkUrl("https://user:pw@example.com/", "url"));
        assertThrows(ApiException.class, () -> strict.checkUrl("https:///nohost", "url"));
        assertThrows(ApiException.class, () -> strict.checkUrl("not a url", "url"));
        assertDoesNotThrow(() -> strict.checkUrl("https://example.com/hook", "url"));
        assertDoesNotThrow(() -> loopbackAllowed.checkUrl("http://127.0.0.1:8080/hook", "url"));
    }

    @Test
    void ipv4LiteralsOtherThanCanonicalDottedDecimalAreRefusedEverywhere() {
        // Java reads 0177.0.0.1 as 177.0.0.1 (public), curl and browsers as 127.0.0.1
        for (String host : new String[] { "0177.0.0.1", "2130706433", "0x7f.1", "0x7f000001", "127.1", "127.0.1",
                "127.0.0.01", "0127.0.0.1", "00.0.0.0", "1.2.3.4.5", "127.0.0.1.", "256.1.1.1", "example.0x7f",
                "example.123", "0X7F.0.0.1" }) {
            String url = "http://" + host + ":8080/hook";
            ApiException saved = assertThrows(ApiException.class, () -> loopbackAllowed.checkUrl(url, "body", "url"),
                    url);
            assertEquals(ApiException.Kind.INVALID, saved.kind());
            SsrfGuard.Refused sent = assertThrows(SsrfGuard.Refused.class, () -> loopbackAllowed.resolve(url), url);
            assertTrue(sent.getMessage().contains("canonical dotted-decimal"), sent.getMessage());
        }
        for (String host : new String[] { "127.0.0.1", "127.0.0.10", "127.255.255.254", "127.0.100.0" }) {
            assertDoesNotThrow(() -> loopbackAllowed.checkUrl("http://" + host + "/hook", "url"), host);
        }
        assertDoesNotThrow(() -> strict.checkUrl("https://8.8.8.8/hook", "url"));
        assertDoesNotThrow(() -> strict.checkUrl("https://123.example.com/hook", "url"));
        assertDoesNotThrow(() -> strict.checkUrl("https://example.com./hook", "url"));
    }

    @Test
    void allowListEntriesMustBeNetworks() {
        assertThrows(IllegalArgumentException.class, () -> new SsrfGuard(false, List.of("example.com/8")));
        assertThrows(IllegalArgumentException.class, () -> new SsrfGuard(false, List.of("10.0.0.0/33")));
    }
}
