package dev.fulcrum.accounts;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Default;
import jakarta.inject.Inject;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.jboss.logging.Logger;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.AgroalConnectionFactoryConfiguration;
import io.agroal.api.security.SimplePassword;
import io.quarkus.arc.Arc;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * The seam between access decisions kept in memory and the commits that change them. Every commit that changes who may
 * do what (a key revoked or deleted, a member removed or demoted, a user, project or team changed or deleted, and a
 * dataset version written, since the dataset read keeps answers too) notifies channel {@value #CHANNEL} from a trigger
 * of the accounts migrations (V65); every replica holds one connection that listens on it, on a thread of its own, and
 * moves its {@linkplain #stamp() generation} on for each notification, so that everything it cached is dropped within
 * milliseconds of the commit. The replica that made the change does not wait for its own notification: the entities of
 * accounts and the dataset versions call {@link #changing()} and the generation moves as the transaction ends.
 * <p>
 * A cache keeps a decision with the stamp read <em>before</em> it checked the database, and reuses it only while
 * {@link #unchanged(long)}: a change committed after the check began moves the generation after the stamp was read.
 * While the listening connection is down no stamp is valid, so every decision is checked per request until the listener
 * is back (readiness check "Access changes" says which mode the replica is in).
 */
@Readiness
@Default // @Readiness is a qualifier: the caches inject it plainly
@ApplicationScoped
public class AccessChanges implements HealthCheck {

    static final String CHANNEL = "access_changed";
    /** The stamp of a moment when nothing may be cached (the listener is down). */
    public static final long UNTRUSTED = -1;
    /**
     * Shown in pg_stat_activity with the process id after it, so an operator (and ReplicasIT) can find a replica's
     * listening backend.
     */
    public static final String APPLICATION_NAME = "fulcrum-access-listener";

    private static final Logger LOG = Logger.getLogger(AccessChanges.class);
    /** How long one wait for notifications lasts; between waits the connection is checked now and then. */
    private static final int POLL_MILLIS = 500;
    /** A connection that died silently (a network cut) would send no error: checked with a round trip this often. */
    private static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(5);

    @Inject
    AgroalDataSource dataSource;

    @Inject
    AccountsConfig config;

    private static final ThreadLocal<Boolean> CHANGED_ON_THIS_THREAD = new ThreadLocal<>();

    private final AtomicLong generation = new AtomicLong();
    private volatile boolean listening;
    private volatile boolean running;
    private Thread listener;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition stopped = lock.newCondition();

    void start(@Observes StartupEvent started) {
        running = true;
        listener = new Thread(this::listen, "access-changes-listener");
        listener.setDaemon(true);
        listener.start();
    }

    void stop(@Observes ShutdownEvent stopping) {
        close();
    }

    @PreDestroy
    void close() {
        running = false;
        lock.lock();
        try {
            stopped.signalAll();
        } finally {
            lock.unlock();
        }
        if (listener != null) {
            listener.interrupt();
        }
    }

    /** The generation now, to keep with a decision checked from here on; {@link #UNTRUSTED} while not listening. */
    public long stamp() {
        return listening ? generation.get() : UNTRUSTED;
    }

    /** Whether a decision checked after {@code stamp} was read may still be used. */
    public boolean unchanged(long stamp) {
        return stamp != UNTRUSTED && listening && generation.get() == stamp;
    }

    /** Whether cached decisions are trusted (the listener is up) or every request is checked against the database. */
    public boolean pushed() {
        return listening;
    }

    /**
     * Called inside a transaction that changes access: when it ends, this replica's generation moves on at once (the
     * notification reaches the other replicas, and this one again a moment later). Outside a transaction, at once.
     */
    public static void changing() {
        CHANGED_ON_THIS_THREAD.set(Boolean.TRUE);
        AccessChanges changes = Arc.container().instance(AccessChanges.class).get();
        TransactionSynchronizationRegistry transaction = Arc.container()
                .instance(TransactionSynchronizationRegistry.class).get();
        if (transaction == null || transaction.getTransactionKey() == null) {
            changes.moved();
            return;
        }
        // at once as well: should the end of the transaction not be seen (a synchronization refused while it commits),
        // the next request still misses; one checked in between is dropped by the notification a moment later
        changes.moved();
        if (transaction.getResource(AccessChanges.class) != null) {
            return;
        }
        transaction.putResource(AccessChanges.class, Boolean.TRUE);
        try {
            transaction.registerInterposedSynchronization(new Synchronization() {
                @Override
                public void beforeCompletion() {
                }

                @Override
                public void afterCompletion(int status) {
                    if (status != Status.STATUS_ROLLEDBACK) {
                        changes.moved();
                    }
                }
            });
        } catch (IllegalStateException completing) {
            // too late to wait for the end (the transaction is completing): move now, and again on the notification
            changes.moved();
        }
    }

    void moved() {
        generation.incrementAndGet();
    }

    /**
     * Whether this thread changed access since the last call (which forgets it): a request's response filter asks, so
     * that the generation moves once more after the request's transactions have committed and before its answer leaves
     * ({@link AccessChangeResponses}).
     */
    static boolean changedOnThisThread() {
        boolean changed = CHANGED_ON_THIS_THREAD.get() == Boolean.TRUE;
        CHANGED_ON_THIS_THREAD.remove();
        return changed;
    }

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("Access changes").up().withData("mode", listening ? "push" : "per-request")
                .build();
    }

    private void listen() {
        while (running) {
            try (Connection connection = connect()) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("listen " + CHANNEL);
                }
                PGConnection notifications = connection.unwrap(PGConnection.class);
                // notifications missed while not listening: nothing cached before this moment is trusted
                moved();
                listening = true;
                LOG.info("Listening for access changes: cached access decisions are trusted until a change arrives");
                long checked = System.nanoTime();
                while (running) {
                    PGNotification[] arrived = notifications.getNotifications(POLL_MILLIS);
                    if (arrived != null && arrived.length > 0) {
                        moved();
                    }
                    if (System.nanoTime() - checked > CHECK_NANOS) {
                        if (!connection.isValid(2)) {
                            throw new SQLException("The listening connection does not answer");
                        }
                        checked = System.nanoTime();
                    }
                }
            } catch (SQLException | RuntimeException e) {
                boolean was = listening;
                listening = false;
                moved();
                if (running) {
                    if (was) {
                        LOG.warnf("Access changes listener lost (%s): every request is checked against the database "
                                + "until it is back", e.getMessage());
                    }
                    awaitRetry();
                }
            }
        }
        listening = false;
    }

    private void awaitRetry() {
        lock.lock();
        try {
            stopped.await(config.listenerRetry().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        } finally {
            lock.unlock();
        }
    }

    /** A connection of its own, outside the pool: it is held for as long as the replica runs. */
    private Connection connect() throws SQLException {
        AgroalConnectionFactoryConfiguration factory = dataSource.getConfiguration().connectionPoolConfiguration()
                .connectionFactoryConfiguration();
        Properties properties = new Properties();
        properties.putAll(factory.jdbcProperties());
        if (factory.principal() != null) {
            properties.setProperty("user", factory.principal().getName());
        }
        for (Object credential : factory.credentials()) {
            if (credential instanceof SimplePassword password) {
                properties.setProperty("password", password.getWord());
            }
        }
        properties.setProperty("ApplicationName", APPLICATION_NAME + "-" + ProcessHandle.current().pid());
        properties.setProperty("tcpKeepAlive", "true");
        Connection connection = new org.postgresql.Driver().connect(factory.jdbcUrl(), properties);
        if (connection == null) {
            throw new SQLException("Not a PostgreSQL URL: " + factory.jdbcUrl());
        }
        connection.setAutoCommit(true);
        return connection;
    }
}
