package dev.fulcrum.inference.engine.upstream;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.resolver.ResolvedAddressTypes;
import io.netty.resolver.dns.DnsNameResolver;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.resolver.dns.DnsServerAddressStreamProviders;
import io.netty.resolver.dns.NoopAuthoritativeDnsServerCache;
import io.netty.resolver.dns.NoopDnsCache;
import io.netty.resolver.dns.NoopDnsCnameCache;
import io.netty.resolver.dns.SequentialDnsServerAddressStreamProvider;
import io.netty.util.concurrent.DefaultThreadFactory;

import dev.fulcrum.inference.InferenceConfig;

/**
 * Every address of a host name, asked of DNS each time (no cache: a headless Service's pods come and go), from the
 * system's servers, search domains and {@code ndots} ({@code /etc/resolv.conf}), or from
 * {@code fulcrum.inference.routing.dns-servers}. IPv4 addresses when the name has any, else IPv6. Netty's resolver on a
 * thread of its own, made at the first name.
 */
@ApplicationScoped
public class HostResolver {

    private static final long QUERY_TIMEOUT_MS = 2_000;

    @Inject
    InferenceConfig config;

    private EventLoopGroup loop;
    private DnsNameResolver resolver;

    private synchronized DnsNameResolver resolver() {
        if (resolver == null) {
            loop = new NioEventLoopGroup(1, new DefaultThreadFactory("fulcrum-dns", true));
            DnsNameResolverBuilder builder = new DnsNameResolverBuilder(loop.next())
                    .channelType(NioDatagramChannel.class).resolveCache(NoopDnsCache.INSTANCE)
                    .cnameCache(NoopDnsCnameCache.INSTANCE)
                    .authoritativeDnsServerCache(NoopAuthoritativeDnsServerCache.INSTANCE)
                    .queryTimeoutMillis(QUERY_TIMEOUT_MS).resolvedAddressTypes(ResolvedAddressTypes.IPV4_PREFERRED);
            List<String> servers = config.routing().dnsServers().orElse(List.of());
            builder.nameServerProvider(servers.isEmpty() ? DnsServerAddressStreamProviders.platformDefault()
                    : new SequentialDnsServerAddressStreamProvider(
                            servers.stream().map(HostResolver::socketAddress).toArray(InetSocketAddress[]::new)));
            resolver = builder.build();
        }
        return resolver;
    }

    /** {@code host:port} (or {@code host}, port 53) as a socket address; the host must be an IP address. */
    static InetSocketAddress socketAddress(String server) {
        int colon = server.lastIndexOf(':');
        boolean hasPort = colon > 0 && server.indexOf(':') == colon;
        String host = hasPort ? server.substring(0, colon) : server;
        int port = hasPort ? Integer.parseInt(server.substring(colon + 1)) : 53;
        return new InetSocketAddress(host.replace("[", "").replace("]", ""), port);
    }

    /** The host's addresses (IPv4 when it has any), sorted; fails when the name does not resolve. */
    public CompletionStage<List<InetAddress>> resolve(String host) {
        CompletableFuture<List<InetAddress>> result = new CompletableFuture<>();
        resolver().resolveAll(host).addListener(done -> {
            if (!done.isSuccess()) {
                result.completeExceptionally(done.cause());
                return;
            }
            @SuppressWarnings("unchecked")
            List<InetAddress> all = (List<InetAddress>) done.getNow();
            boolean anyV4 = all.stream().anyMatch(Inet4Address.class::isInstance);
            result.complete(all.stream().filter(a -> !anyV4 || a instanceof Inet4Address).distinct()
                    .sorted(Comparator.comparing(InetAddress::getHostAddress)).toList());
        });
        return result;
    }

    @PreDestroy
    synchronized void stop() {
        if (resolver != null) {
            resolver.close();
            loop.shutdownGracefully();
        }
    }
}
