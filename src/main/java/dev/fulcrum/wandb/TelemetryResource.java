package dev.fulcrum.wandb;

import java.io.File;

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
    public Response acceptSdkMetrics(File body) {
        return Response.ok().build();
    }

    @Override
    @AcceptsAnonymous
    public Response acceptSdkLogs(File body) {
        return Response.ok().build();
    }
}
