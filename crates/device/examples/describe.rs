fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sets: Vec<(String, String)> = args[2..]
        .iter()
        .map(|a| {
            let (k, v) = a.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    match flashlab_device::load_device_config(&args[1], &sets) {
        Ok(c) => print!("{}", c.describe()),
        Err(e) => println!("error: {e}"),
    }
}
