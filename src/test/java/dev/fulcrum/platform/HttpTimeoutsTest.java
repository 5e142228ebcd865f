package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * Connections that do not send a request's headers in time ({@code fulcrum.http.header-timeout}, 1 s here) are closed
 * by the server; one whose request is under way is not.
 */
@QuarkusTest
@TestProfile(OperatorSettings.class)
class HttpTimeoutsTest {

    @TestHTTPResource("/")
    URL server;

    private Socket connect() throws IOException {
        Socket socket = new Socket(server.getHost(), server.getPort());
        socket.setSoTimeout(10_000); // a read that fails by this timeout means the server kept the connection
        return socket;
    }

    /** Reads until the server closes the connection; answers the seconds that took and what was read. */
    private static Object[] untilClosed(Socket socket, long since) throws IOException {
        InputStream in = socket.getInputStream();
        StringBuilder read = new StringBuilder();
        byte[] buffer = new byte[4096];
        int n;
        while ((n = in.read(buffer)) >= 0) {
            read.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
        }
        return new Object[] { (System.nanoTime() - since) / 1e9, read.toString() };
    }

    @Test
    void aPartialHeaderIsCutOffAfterTheHeaderTimeout() throws IOException {
        try (Socket socket = connect()) {
            long start = System.nanoTime();
            socket.getOutputStream()
                    .write("GET /q/health/live HTTP/1.1\r\nHost: x\r\nX-Slow: 1".getBytes(StandardCharsets.ISO_8859_1));
            Object[] closed = untilClosed(socket, start);
            double seconds = (double) closed[0];
            assertTrue(seconds >= 0.8 && seconds < 3, "closed after " + seconds + " s (idle timeout: 4 s)");
            assertEquals("", closed[1], "no answer to an unfinished request");
        }
    }

    @Test
    void aConnectionThatSendsNothingIsClosed() throws IOException {
        try (Socket socket = connect()) {
            Object[] closed = untilClosed(socket, System.nanoTime());
            double seconds = (double) closed[0];
            assertTrue(seconds >= 0.8 && seconds < 3, "closed after " + seconds + " s (idle timeout: 4 s)");
        }
    }

    @Test
    void aKeptAliveConnectionIsClosedWhenTheNextRequestDoesNotCome() throws IOException {
        try (Socket socket = connect()) {
            socket.getOutputStream()
                    .write("GET /q/health/live HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            long start = System.nanoTime();
            Object[] closed = untilClosed(socket, start);
            double seconds = (double) closed[0];
            assertTrue(((String) closed[1]).startsWith("HTTP/1.1 200"), (String) closed[1]);
            assertTrue(seconds >= 0.8 && seconds < 3, "closed after " + seconds + " s (idle timeout: 4 s)");
        }
    }

    @Test
    void aRequestUnderWayIsNotCutOffByTheHeaderTimeout() throws IOException {
        try (Socket socket = connect()) {
            // the headers are complete; the body comes after twice the header timeout (within the idle timeout)
            String body = "{\"x\": 1}";
            socket.getOutputStream()
                    .write(("POST /q/health/live HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            + "Content-Length: " + body.length() + "\r\nConnection: close\r\n\r\n")
                                    .getBytes(StandardCharsets.ISO_8859_1));
            sleep(2000); // the client's pause is what is tested: longer than the header timeout, within the idle one
            socket.getOutputStream().write(body.getBytes(StandardCharsets.ISO_8859_1));
            Object[] closed = untilClosed(socket, System.nanoTime());
            assertTrue(((String) closed[1]).startsWith("HTTP/1.1 "), "answered: " + closed[1]);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
