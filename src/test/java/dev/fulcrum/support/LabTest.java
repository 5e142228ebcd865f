package dev.fulcrum.support;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The usual cast of a permission test, new before each test: a {@link #team} with its {@link #admin}, a {@link #member}
 * and a {@link #viewer}, and an {@link #outsider} who has no role on it. A subclass's own {@code @BeforeEach} runs
 * after this one.
 */
public abstract class LabTest {

    @Inject
    protected Fixtures fixtures;

    protected Account admin;
    protected Account member;
    protected Account viewer;
    protected Account outsider;
    protected PlatformEntity team;

    @BeforeEach
    void lab() {
        admin = fixtures.user("admin");
        member = fixtures.user("member");
        viewer = fixtures.user("viewer");
        outsider = fixtures.user("outsider");
        team = fixtures.team("lab", admin);
        fixtures.member(team, member, Role.MEMBER);
        fixtures.member(team, viewer, Role.VIEWER);
    }
}
