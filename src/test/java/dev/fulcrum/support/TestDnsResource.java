package dev.fulcrum.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * A {@link TestDns} for the test run, as the application's only DNS server for replica names
 * ({@code fulcrum.inference.routing.dns-servers}). Its zone starts empty; a test finds the file under
 * {@value #ZONE_PROPERTY} and rewrites it with {@link TestDns#write}.
 */
public class TestDnsResource implements QuarkusTestResourceLifecycleManager {

    /** The configuration property holding the absolute path of the zone file. */
    public static final String ZONE_PROPERTY = "test-dns.zone";

    private TestDns dns;
    private Path zoneFile;

    @Override
    public Map<String, String> start() {
        try {
            zoneFile = Files.createTempFile("fulcrum-test-dns", ".zone");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        dns = TestDns.start(zoneFile);
        return Map.of("fulcrum.inference.routing.dns-servers", "127.0.0.1:" + dns.port(), ZONE_PROPERTY,
                zoneFile.toAbsolutePath().toString());
    }

    @Override
    public void stop() {
        if (dns != null) {
            dns.close();
        }
        if (zoneFile != null) {
            try {
                Files.deleteIfExists(zoneFile);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
