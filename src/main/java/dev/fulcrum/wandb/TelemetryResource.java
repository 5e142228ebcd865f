package dev.fulcrum.wandb;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;

import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.AcceptsAnonymous;
import dev.fulcrum.wandb.api.WandbTelemetryApi;

/**
 * The SDK's own OpenTelemetry export, sent without credentials: accepted, and dropped (Fulcrum keeps no telemetry of
 * its clients).
 */
public class TelemetryResource implements WandbTelemetryApi {

    @Override
    @AcceptsAnonymous
    public Response acceptSdkMetrics(InputStream body) {
        return drop(body);
    }

    @Override
    @AcceptsAnonymous
    public Response acceptSdkLogs(InputStream body) {
        return drop(body);
    }

    /** Reads the export to its end (bounded by {@code quarkus.http.limits.max-body-size}) and keeps nothing. */
    private static Response drop(InputStream body) {
        if (body != null) {
            try {
                body.transferTo(OutputStream.nullOutputStream());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return Response.ok().build();
    }
}
