package dev.fulcrum.datasets;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.User;
import dev.fulcrum.datasets.api.ViewerApi;
import dev.fulcrum.datasets.api.model.GraphqlErrorRes;
import dev.fulcrum.datasets.api.model.GraphqlErrorResErrorsInner;
import dev.fulcrum.datasets.api.model.GraphqlReq;
import dev.fulcrum.datasets.api.model.GraphqlViewerRes;
import dev.fulcrum.datasets.api.model.GraphqlViewerResData;
import dev.fulcrum.datasets.api.model.GraphqlViewerResDataViewer;
import dev.fulcrum.datasets.api.model.GraphqlViewerResDataViewerDefaultEntity;

/**
 * {@code POST /graphql}: the one GraphQL document W&B clients send to learn the caller's default entity (the Weave
 * SDK's {@code init('project')}), answered with the caller's user name and personal entity. Not a GraphQL server: the
 * document must be that query (any spacing, commas and comments; named {@code DefaultEntity} or anonymous).
 */
public class ViewerResource implements ViewerApi {

    static final String DOCUMENT = "query DefaultEntity { viewer { username defaultEntity { name } } }";
    private static final Pattern TOKEN = Pattern.compile("[_A-Za-z][_0-9A-Za-z]*|[{}]|[^\\s,_A-Za-z{}]+");
    private static final List<String> SELECTION = tokens("{ viewer { username defaultEntity { name } } }");

    @Inject
    Access access;

    @Override
    @Transactional
    public Response graphqlViewer(GraphqlReq req) {
        if (!isDefaultEntityQuery(req.getQuery())) {
            String message = "Fulcrum answers only the GraphQL query '" + DOCUMENT + "'; it is not a GraphQL server";
            return Response.status(400).type(MediaType.APPLICATION_JSON_TYPE).entity(new GraphqlErrorRes()
                    .detail(message).errors(List.of(new GraphqlErrorResErrorsInner().message(message)))).build();
        }
        User user = User.findById(access.caller().userId());
        return Response
                .ok(new GraphqlViewerRes()
                        .data(new GraphqlViewerResData().viewer(new GraphqlViewerResDataViewer().username(user.username)
                                .defaultEntity(new GraphqlViewerResDataViewerDefaultEntity().name(user.entity.name)))))
                .build();
    }

    static boolean isDefaultEntityQuery(String document) {
        List<String> tokens = tokens(document.replaceAll("#[^\\n\\r]*", ""));
        if (tokens.size() >= 2 && tokens.get(0).equals("query") && tokens.get(1).equals("DefaultEntity")) {
            tokens = tokens.subList(2, tokens.size());
        } else if (!tokens.isEmpty() && tokens.get(0).equals("query")) {
            tokens = tokens.subList(1, tokens.size());
        }
        return tokens.equals(SELECTION);
    }

    private static List<String> tokens(String text) {
        List<String> tokens = new ArrayList<>();
        Matcher m = TOKEN.matcher(text);
        while (m.find()) {
            tokens.add(m.group());
        }
        return tokens;
    }
}
