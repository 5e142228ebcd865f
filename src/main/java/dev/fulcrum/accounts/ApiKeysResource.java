package dev.fulcrum.accounts;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.api.ApiKeysApi;
import dev.fulcrum.accounts.api.model.ApiKeyCreate;

public class ApiKeysResource implements ApiKeysApi {

    @Inject
    Access access;

    @Inject
    ApiKeys apiKeys;

    @Override
    public Response listApiKeys() {
        return Response.ok(apiKeys.list(access.caller().userId()).stream().map(AccountsMapper::apiKey).toList())
                .build();
    }

    @Override
    public Response createApiKey(ApiKeyCreate req) {
        ApiKeys.Created created = apiKeys.create(access.caller().userId(), req.getName());
        return Response.status(Response.Status.CREATED).entity(AccountsMapper.created(created)).build();
    }

    @Override
    public Response revokeApiKey(Long id) {
        apiKeys.revoke(access.caller().userId(), id);
        return Response.noContent().build();
    }

    @Override
    public Response createUserApiKey(String username, ApiKeyCreate req) {
        access.serverAdmin();
        ApiKeys.Created created = apiKeys.createFor(username, req.getName());
        return Response.status(Response.Status.CREATED).entity(AccountsMapper.created(created)).build();
    }
}
