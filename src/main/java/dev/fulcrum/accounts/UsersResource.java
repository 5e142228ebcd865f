package dev.fulcrum.accounts;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.api.UsersApi;
import dev.fulcrum.accounts.api.model.UserCreate;

public class UsersResource implements UsersApi {

    @Inject
    Access access;

    @Inject
    Users users;

    @Override
    public Response getMe() {
        return Response.ok(AccountsMapper.user(users.me())).build();
    }

    @Override
    public Response listUsers() {
        access.serverAdmin();
        return Response.ok(users.list().stream().map(AccountsMapper::user).toList()).build();
    }

    @Override
    public Response createUser(UserCreate req) {
        access.serverAdmin();
        User user = users.create(req.getUsername(), req.getEmail(), Boolean.TRUE.equals(req.getAdmin()));
        return Response.status(Response.Status.CREATED).entity(AccountsMapper.user(user)).build();
    }

    @Override
    public Response getUser(String username) {
        return Response.ok(AccountsMapper.user(users.get(username))).build();
    }
}
