package dev.fulcrum.accounts;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.api.RegistriesApi;
import dev.fulcrum.accounts.api.model.MemberUpdate;
import dev.fulcrum.accounts.api.model.RegistryCreate;

public class RegistriesResource implements RegistriesApi {

    @Inject
    Access access;

    @Inject
    Registries registries;

    @Override
    public Response listRegistries() {
        return Response.ok(registries.list().stream().map(AccountsMapper::registry).toList()).build();
    }

    @Override
    public Response createRegistry(RegistryCreate req) {
        Registry registry = registries.create(req.getName(), req.getDescription(), access.caller().userId());
        return Response.status(Response.Status.CREATED)
                .entity(AccountsMapper.registry(new WithRole<>(registry, Role.ADMIN))).build();
    }

    @Override
    public Response getRegistry(String registry) {
        return Response.ok(AccountsMapper.registry(registries.get(registry))).build();
    }

    @Override
    public Response deleteRegistry(String registry) {
        registries.delete(registry);
        return Response.noContent().build();
    }

    @Override
    public Response listRegistryMembers(String registry) {
        return Response.ok(registries.members(registry).stream().map(AccountsMapper::member).toList()).build();
    }

    @Override
    public Response getRegistryMember(String registry, String username) {
        return Response.ok(AccountsMapper.member(registries.member(registry, username))).build();
    }

    @Override
    public Response setRegistryMember(String registry, String username, MemberUpdate req) {
        Role role = AccountsMapper.role(req.getRole());
        return Response.ok(AccountsMapper.member(registries.setMember(registry, username, role))).build();
    }

    @Override
    public Response removeRegistryMember(String registry, String username) {
        registries.removeMember(registry, username);
        return Response.noContent().build();
    }
}
