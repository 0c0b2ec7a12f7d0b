// The webflux_r2dbc stack of the benchmark study (scripts/services/stacks.sh): Spring Boot
// WebFlux, r2dbc-postgresql under r2dbc-pool, reactive Redis through Spring Data's Lettuce
// connection factory. Configured from the environment: DATABASE_URL (PgBouncer's, in transaction
// mode, postgres://user:password@host:port/database), REDIS_URL, PORT, POOL_SIZE (default 10).
package perfbase.stacks;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.R2dbcTimeoutException;
import io.r2dbc.spi.Statement;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.r2dbc.R2dbcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

// Boot's own R2DBC pool is left out (R2dbcAutoConfiguration): this one is built below, with the
// settings PgBouncer needs.
@SpringBootApplication(exclude = R2dbcAutoConfiguration.class)
@RestController
public class StacksApplication {
  static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(2);
  static final Duration QUERY_TIMEOUT = Duration.ofSeconds(10);

  /** No connection could be had from the pool within ACQUIRE_TIMEOUT. */
  static final class PoolExhausted extends RuntimeException {
    PoolExhausted() {
      super("pool exhausted: no connection within 2 s", null, false, false);
    }
  }

  private final ConnectionPool pool;
  private final ReactiveRedisConnectionFactory redis;

  public StacksApplication(ReactiveRedisConnectionFactory redis) {
    this.redis = redis;
    this.pool = pool(System.getenv("DATABASE_URL"), poolSize());
  }

  public static void main(String[] args) {
    SpringApplication.run(StacksApplication.class, args);
  }

  static int poolSize() {
    String v = System.getenv("POOL_SIZE");
    return v == null || v.isEmpty() ? 10 : Integer.parseInt(v);
  }

  /**
   * The pool over DATABASE_URL. preparedStatementCacheQueries(0): r2dbc-postgresql otherwise
   * prepares each statement with parameters under a name, cached per connection, which PgBouncer
   * in transaction mode may have left on another server connection ("prepared statement ... does
   * not exist"); with no cache it uses the unnamed statement, sent as Parse, Bind, Describe,
   * Execute and Sync at once.
   */
  static ConnectionPool pool(String url, int size) {
    URI u = URI.create(url);
    String[] userInfo = u.getRawUserInfo().split(":", 2);
    PostgresqlConnectionConfiguration cfg =
        PostgresqlConnectionConfiguration.builder()
            .host(u.getHost())
            .port(u.getPort() > 0 ? u.getPort() : 5432)
            .username(URLDecoder.decode(userInfo[0], StandardCharsets.UTF_8))
            .password(URLDecoder.decode(userInfo.length > 1 ? userInfo[1] : "", StandardCharsets.UTF_8))
            .database(u.getPath().replaceFirst("^/", ""))
            .preparedStatementCacheQueries(0)
            .connectTimeout(ACQUIRE_TIMEOUT)
            .build();
    return new ConnectionPool(
        ConnectionPoolConfiguration.builder(new PostgresqlConnectionFactory(cfg))
            .initialSize(0)
            .maxSize(size)
            .maxAcquireTime(ACQUIRE_TIMEOUT)
            .build());
  }

  /** The first row of sql run with args, mapped by f, on a connection from the pool. */
  <T> Mono<T> one(String sql, Function<io.r2dbc.spi.Readable, T> f, Object... args) {
    Mono<Connection> acquire =
        Mono.from(pool.create())
            .onErrorMap(
                e -> e instanceof R2dbcTimeoutException || e instanceof TimeoutException,
                e -> new PoolExhausted());
    return Mono.usingWhen(
        acquire,
        c -> {
          Statement st = c.createStatement(sql);
          for (int i = 0; i < args.length; i++) st.bind(i, args[i]);
          return Flux.from(st.execute()).flatMap(r -> r.map(f)).next().timeout(QUERY_TIMEOUT);
        },
        Connection::close);
  }

  static ResponseEntity<Object> dbError(Throwable e) {
    HttpStatus code = e instanceof PoolExhausted ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.INTERNAL_SERVER_ERROR;
    return ResponseEntity.status(code).contentType(MediaType.TEXT_PLAIN).body(e.getMessage() + "\n");
  }

  @GetMapping(value = "/", produces = MediaType.TEXT_PLAIN_VALUE)
  public String hello() {
    return "Hello, World!";
  }

  @GetMapping("/db")
  public Mono<ResponseEntity<Object>> db() {
    int aid = ThreadLocalRandom.current().nextInt(1, 100001);
    return one(
            "SELECT aid, bid, abalance FROM pgbench_accounts WHERE aid = $1",
            r -> {
              Map<String, Object> m = new LinkedHashMap<>();
              m.put("aid", r.get(0, Integer.class));
              m.put("bid", r.get(1, Integer.class));
              m.put("abalance", r.get(2, Integer.class));
              return (Object) m;
            },
            aid)
        .map(ResponseEntity::ok)
        .onErrorResume(e -> Mono.just(dbError(e)));
  }

  @GetMapping("/tx")
  public Mono<ResponseEntity<Object>> tx() {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    long aid = rnd.nextLong(1, 100001), tid = rnd.nextLong(1, 11), bid = 1;
    int delta = rnd.nextInt(-5000, 5001);
    return one("SELECT pgbench_tx($1, $2, $3, $4)", r -> r.get(0, Integer.class), aid, tid, bid, delta)
        .map(
            abalance -> {
              Map<String, Object> m = new LinkedHashMap<>();
              m.put("aid", aid);
              m.put("tid", tid);
              m.put("bid", bid);
              m.put("delta", delta);
              m.put("abalance", abalance);
              return ResponseEntity.ok((Object) m);
            })
        .onErrorResume(e -> Mono.just(dbError(e)));
  }

  /** "ok", or "error: " and what failed. */
  static Mono<String> check(Mono<?> m) {
    return m.then(Mono.just("ok")).onErrorResume(e -> Mono.just("error: " + e.getMessage()));
  }

  Mono<String> checkPostgres() {
    return check(one("SELECT 1", r -> r.get(0, Integer.class)));
  }

  Mono<String> checkRedis() {
    return check(
        Mono.usingWhen(
                Mono.fromSupplier(redis::getReactiveConnection),
                c -> c.ping(),
                c -> c.closeLater())
            .timeout(QUERY_TIMEOUT));
  }

  @GetMapping("/health/all")
  public Mono<ResponseEntity<Object>> healthAll(@RequestParam(defaultValue = "sequential") String mode) {
    Mono<String[]> both;
    if (mode.equals("sequential")) {
      both = checkPostgres().flatMap(pg -> checkRedis().map(rd -> new String[] {pg, rd}));
    } else if (mode.equals("concurrent")) {
      both = Mono.zip(checkPostgres(), checkRedis(), (pg, rd) -> new String[] {pg, rd});
    } else {
      return Mono.just(
          ResponseEntity.badRequest().contentType(MediaType.TEXT_PLAIN).body("mode is sequential or concurrent\n"));
    }
    return both.map(
        r -> {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("postgres", r[0]);
          m.put("redis", r[1]);
          m.put("mode", mode);
          HttpStatus code = r[0].equals("ok") && r[1].equals("ok") ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE;
          return ResponseEntity.status(code).body((Object) m);
        });
  }

  /** The Server header on every response, errors and 404s included. */
  @Bean
  WebFilter serverHeader(@Value("${stack.server}") String server) {
    return (exchange, chain) -> {
      exchange.getResponse().getHeaders().set("Server", server);
      return chain.filter(exchange);
    };
  }
}
