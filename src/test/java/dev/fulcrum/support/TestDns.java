package dev.fulcrum.support;

import static java.nio.file.StandardCopyOption.ATOMIC_MOVE;
import static java.nio.file.StandardCopyOption.REPLACE_EXISTING;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.dns.DatagramDnsQuery;
import io.netty.handler.codec.dns.DatagramDnsQueryDecoder;
import io.netty.handler.codec.dns.DatagramDnsResponse;
import io.netty.handler.codec.dns.DatagramDnsResponseEncoder;
import io.netty.handler.codec.dns.DefaultDnsQuestion;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
import io.netty.handler.codec.dns.DnsQuestion;
import io.netty.handler.codec.dns.DnsRecord;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.handler.codec.dns.DnsSection;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * A tiny authoritative DNS server for tests, on UDP 127.0.0.1 and a free port: the IPv4 addresses of the names in a
 * zone file, NXDOMAIN for every other name. Each line of the file is {@code name ip1 ip2 ...}. The file is read at
 * every query, so a test changes the answers by rewriting it with {@link #write}, even from another class loader than
 * the one that started the server.
 */
public final class TestDns implements AutoCloseable {

    private final EventLoopGroup loop;
    private final Channel channel;
    private final Path zoneFile;

    private TestDns(EventLoopGroup loop, Channel channel, Path zoneFile) {
        this.loop = loop;
        this.channel = channel;
        this.zoneFile = zoneFile;
    }

    /** A server answering from {@code zoneFile} (which may not exist yet: then it knows no name). */
    public static TestDns start(Path zoneFile) {
        EventLoopGroup loop = new NioEventLoopGroup(1, new DefaultThreadFactory("test-dns", true));
        try {
            Channel channel = new Bootstrap().group(loop).channel(NioDatagramChannel.class)
                    .handler(new ChannelInitializer<NioDatagramChannel>() {
                        @Override
                        protected void initChannel(NioDatagramChannel ch) {
                            ch.pipeline().addLast(new DatagramDnsQueryDecoder(), new DatagramDnsResponseEncoder(),
                                    new Answers(zoneFile));
                        }
                    }).bind("127.0.0.1", 0).syncUninterruptibly().channel();
            return new TestDns(loop, channel, zoneFile);
        } catch (RuntimeException e) {
            loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
    }

    public int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    public Path zoneFile() {
        return zoneFile;
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * Replaces the zone with {@code zone} (name to IPv4 addresses). Written beside the file and moved over it, so a
     * query never reads half a zone.
     */
    public static void write(Path zoneFile, Map<String, List<String>> zone) {
        StringBuilder text = new StringBuilder();
        for (Map.Entry<String, List<String>> name : zone.entrySet()) {
            text.append(name.getKey()).append(' ').append(String.join(" ", name.getValue())).append('\n');
        }
        try {
            Path target = zoneFile.toAbsolutePath();
            Path temporary = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".tmp");
            try {
                Files.writeString(temporary, text, StandardCharsets.UTF_8);
                Files.move(temporary, target, ATOMIC_MOVE, REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(temporary);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Lower case without the trailing dot: the form in which zone names and asked names are compared. */
    private static String canonical(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return lower.endsWith(".") ? lower.substring(0, lower.length() - 1) : lower;
    }

    private static Map<String, List<byte[]>> readZone(Path zoneFile) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(zoneFile, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return Map.of();
        }
        Map<String, List<byte[]>> zone = new HashMap<>();
        for (String line : lines) {
            String[] words = line.trim().split("\\s+");
            if (words[0].isEmpty()) {
                continue;
            }
            List<byte[]> addresses = Arrays.stream(words, 1, words.length).map(TestDns::ipv4).toList();
            zone.put(canonical(words[0]), addresses);
        }
        return zone;
    }

    private static byte[] ipv4(String address) {
        // Netty's parser, not InetAddress.getByName: a mistyped address must fail, not be looked up as a host name
        byte[] bytes = NetUtil.createByteArrayFromIpAddressString(address);
        if (bytes == null || bytes.length != 4) {
            throw new IllegalArgumentException("Not an IPv4 address in the test zone: " + address);
        }
        return bytes;
    }

    private static final class Answers extends SimpleChannelInboundHandler<DatagramDnsQuery> {

        private final Path zoneFile;

        Answers(Path zoneFile) {
            this.zoneFile = zoneFile;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, DatagramDnsQuery query) {
            DatagramDnsResponse response = new DatagramDnsResponse(query.recipient(), query.sender(), query.id());
            response.setAuthoritativeAnswer(true);
            response.setRecursionDesired(query.isRecursionDesired());
            DnsQuestion question = query.recordAt(DnsSection.QUESTION);
            if (question == null) {
                ctx.writeAndFlush(response.setCode(DnsResponseCode.FORMERR));
                return;
            }
            // a copy: the query and its records are released when this method returns
            response.addRecord(DnsSection.QUESTION,
                    new DefaultDnsQuestion(question.name(), question.type(), question.dnsClass()));
            Map<String, List<byte[]>> zone;
            try {
                zone = readZone(zoneFile);
            } catch (IOException | RuntimeException e) {
                // a broken zone fails the lookup loudly instead of passing for a missing name
                ctx.writeAndFlush(response.setCode(DnsResponseCode.SERVFAIL));
                return;
            }
            List<byte[]> addresses = zone.get(canonical(question.name()));
            if (addresses == null) {
                response.setCode(DnsResponseCode.NXDOMAIN);
            } else if (question.type() == DnsRecordType.A) {
                // TTL 0: nothing between the test and this server may keep an answer after the zone changes
                for (byte[] address : addresses) {
                    response.addRecord(DnsSection.ANSWER, new DefaultDnsRawRecord(question.name(), DnsRecordType.A,
                            DnsRecord.CLASS_IN, 0, Unpooled.wrappedBuffer(address)));
                }
            }
            ctx.writeAndFlush(response);
        }
    }
}
