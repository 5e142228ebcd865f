package dev.fulcrum.platform;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;

import org.jboss.logging.Logger;

/** A test endpoint that writes one log line within its request, for the tests of the log format. */
@Path("/test-support/log-probe")
public class LogProbeResource {

    private static final Logger LOG = Logger.getLogger(LogProbeResource.class);

    @POST
    public String log(@QueryParam("marker") String marker) {
        LOG.infof("log probe %s", marker);
        return marker;
    }
}
