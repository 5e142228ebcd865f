package dev.fulcrum.wandb;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.logging.Logger;

import dev.fulcrum.wandb.api.WandbGraphqlApi;
import dev.fulcrum.wandb.api.model.WandbGraphqlRequest;

import graphql.ErrorClassification;
import graphql.ErrorType;
import graphql.ExecutionResult;
import graphql.GraphQLError;

/**
 * {@code POST /graphql}: a document executed by {@link WandbGraphql}. The HTTP status tells the SDK whether to retry: a
 * document the schema refuses is a 400; a failure of the document's only top-level field (no data at all) is answered
 * with that failure's status (403 for a viewer's write, 404 for an unknown entity); otherwise 200.
 */
public class GraphqlResource implements WandbGraphqlApi {

    private static final Logger LOG = Logger.getLogger(GraphqlResource.class);

    @Inject
    WandbGraphql graphql;

    @Context
    UriInfo uri;

    @Override
    public Response executeGraphql(WandbGraphqlRequest req) {
        ExecutionResult result = graphql.execute(req.getQuery(), req.getOperationName(), req.getVariables(),
                uri.getBaseUri().toString());
        Map<String, Object> body = result.toSpecification();
        int status = status(result);
        if (status == 400 && LOG.isDebugEnabled()) {
            // what a client asked that this server does not serve (at DEBUG: clients probe optional fields)
            LOG.debugf("GraphQL document %s refused: %s", req.getOperationName(),
                    result.getErrors().get(0).getMessage());
        }
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(body).build();
    }

    static int status(ExecutionResult result) {
        List<GraphQLError> errors = result.getErrors();
        if (errors.isEmpty()) {
            return 200;
        }
        if (!result.isDataPresent()) {
            return 400; // the document did not parse or validate: nothing was executed
        }
        Map<String, Object> data = result.getData();
        boolean nothing = data == null || data.values().stream().allMatch(value -> value == null);
        if (!nothing) {
            return 200;
        }
        int status = 200;
        for (GraphQLError error : errors) {
            Object given = error.getExtensions() == null ? null : error.getExtensions().get("status");
            if (given instanceof Integer code) {
                status = Math.max(status, code);
            } else if (isRequestError(error.getErrorType())) {
                status = Math.max(status, 400);
            }
        }
        return status;
    }

    private static boolean isRequestError(ErrorClassification type) {
        return type == ErrorType.ValidationError || type == ErrorType.InvalidSyntax
                || type == ErrorType.OperationNotSupported;
    }

}
