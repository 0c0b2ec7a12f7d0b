//! Plumbing shared by the reference service and the faulty servers: an accept loop whose
//! connection tasks are all aborted on shutdown, and a dedicated thread + runtime to host a
//! server in the background.

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// Accept connections on `listener` and run `on_accept(stream, peer)` for each one as its own
/// task, until `shutdown` resolves. Then the listener is closed and every connection task is
/// aborted (which drops, and so closes, its socket); this returns once all of them are gone.
pub(crate) async fn accept_loop<S, H, Fut>(listener: TcpListener, shutdown: S, mut on_accept: H)
where
    S: Future<Output = ()>,
    H: FnMut(TcpStream, SocketAddr) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            // Reap finished connection tasks so the set does not grow without bound.
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    tasks.spawn(on_accept(stream, peer));
                }
                // Accept errors are transient (a peer that went away, or running out of file
                // descriptors under heavy load): back off briefly and keep serving.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
    drop(listener);
    tasks.shutdown().await;
}

/// A server running on its own OS thread with its own runtime. Stopping it (explicitly or by
/// dropping) signals the shutdown future and waits for the thread to finish.
pub(crate) struct ServerThread {
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ServerThread {
    /// Bind 127.0.0.1:`port` (0 = any free port), build a multi-thread runtime with 2 workers
    /// and run `run(listener, shutdown_rx)` on a new thread. All setup errors are returned here.
    pub(crate) fn start<F, Fut>(name: &str, port: u16, run: F) -> io::Result<(SocketAddr, Self)>
    where
        F: FnOnce(TcpListener, oneshot::Receiver<()>) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let std_listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(name)
            .enable_all()
            .build()?;
        let listener = {
            let _guard = runtime.enter();
            TcpListener::from_std(std_listener)?
        };
        let (tx, rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                runtime.block_on(run(listener, rx));
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        Ok((
            addr,
            ServerThread {
                shutdown: Some(tx),
                thread: Some(thread),
            },
        ))
    }

    /// Signal shutdown and wait for the server thread. Idempotent.
    pub(crate) fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            // The receiver is gone only if the server already exited; nothing to signal then.
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread has already been reported by the panic hook.
            let _ = thread.join();
        }
    }
}

impl Drop for ServerThread {
    fn drop(&mut self) {
        self.stop();
    }
}
