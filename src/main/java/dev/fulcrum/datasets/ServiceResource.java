package dev.fulcrum.datasets;

import jakarta.ws.rs.core.Response;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import dev.fulcrum.accounts.AcceptsAnonymous;
import dev.fulcrum.datasets.api.ServiceApi;
import dev.fulcrum.datasets.api.model.ServerInfoRes;

/** The Python SDK's version handshake. */
public class ServiceResource implements ServiceApi {

    /** The SDK release the end-to-end tests run (src/test/python/requirements.txt); older ones were never tried. */
    static final String MIN_WEAVE_PYTHON = "0.54.0";

    @ConfigProperty(name = "quarkus.application.version", defaultValue = "0.1.0")
    String version;

    @Override
    @AcceptsAnonymous
    public Response serverInfo() {
        return Response.ok(new ServerInfoRes().minRequiredWeavePythonVersion(MIN_WEAVE_PYTHON)
                .traceServerVersion(version.replace("-SNAPSHOT", ""))).build();
    }
}
