package dev.fulcrum.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A free loopback port for a fake a test starts later (the address goes into the application's configuration first).
 * Chosen from 10000-19999: below the system's ephemeral range (32768 and up on Linux), where an outgoing connection may
 * take a port as its local one before the fake listens, and below the 20000-31999 of {@code ReplicaStub}'s replicas.
 */
final class ReservedPort {

    private ReservedPort() {
    }

    static int free() {
        IOException failed = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            int port = 10_000 + ThreadLocalRandom.current().nextInt(10_000);
            try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return socket.getLocalPort();
            } catch (IOException e) {
                failed = e; // taken: another one
            }
        }
        throw new UncheckedIOException(failed);
    }
}
