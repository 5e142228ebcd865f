package dev.fulcrum.console;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.AuthenticatesWithSession;

/** {@code /} is the console. */
@Path("/")
@AuthenticatesWithSession
public class RootPage {

    @GET
    @SignedOut
    public Response root() {
        return Pages.seeOther(ConsolePages.HOME);
    }
}
