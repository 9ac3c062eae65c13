//! `citizen-site checkouts ...`: what Stripe's webhook recorded, without SQL.

use clap::builder::PossibleValuesParser;
use clap::Subcommand;
use serde_json::{json, Value};

use super::database::{self, Database};
use super::output::{print_json, printable, rfc3339, table, utc};
use crate::payments::checkouts::{self, Checkout, STATUSES};

#[derive(Subcommand, Debug)]
pub enum CheckoutsCommand {
    /// The recorded checkouts, oldest first, with their settled status.
    List {
        /// Only these: paid, unpaid (a delayed payment not settled yet),
        /// no_payment_required, failed.
        #[arg(long, value_parser = PossibleValuesParser::new(STATUSES))]
        status: Option<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(database: &Database, cmd: CheckoutsCommand) -> anyhow::Result<()> {
    // Only reads: neither makes nor migrates the database.
    let db = database::open_read_only(database).await?;
    match cmd {
        CheckoutsCommand::List { status, json } => {
            let found = checkouts::list(&db, status.as_deref()).await?;
            if json {
                print_json(&Value::Array(found.iter().map(checkout_json).collect()));
            } else if found.is_empty() {
                println!("(no checkouts recorded)");
            } else {
                let rows: Vec<Vec<String>> = found
                    .iter()
                    .map(|c| {
                        vec![
                            c.session_id.clone(),
                            utc(c.completed_at),
                            c.status.clone().unwrap_or_else(|| "-".into()),
                            amount(c.amount_total, c.currency.as_deref()),
                            printable(c.customer_email.as_deref().unwrap_or("-")),
                        ]
                    })
                    .collect();
                println!(
                    "{}",
                    table(
                        &["SESSION", "COMPLETED (UTC)", "STATUS", "AMOUNT", "EMAIL"],
                        &rows
                    )
                );
                println!("{} checkout(s)", found.len());
            }
        }
    }
    Ok(())
}

fn checkout_json(c: &Checkout) -> Value {
    json!({
        "session_id": c.session_id,
        "status": c.status,
        "customer_email": c.customer_email,
        "amount_total": c.amount_total,
        "currency": c.currency,
        "completed_at": rfc3339(c.completed_at),
        "updated_at": c.updated_at.map(rfc3339),
    })
}

/// Currencies Stripe counts in whole units (no minor unit).
const ZERO_DECIMAL: [&str; 16] = [
    "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv",
    "xaf", "xof", "xpf",
];

/// Stripe's minor units as an amount and its currency: `29.00 EUR`, `5000 JPY`.
fn amount(minor: Option<i64>, currency: Option<&str>) -> String {
    let (Some(minor), Some(currency)) = (minor, currency) else {
        return "-".into();
    };
    let code = currency.to_ascii_uppercase();
    if ZERO_DECIMAL.contains(&currency.to_ascii_lowercase().as_str()) {
        format!("{minor} {code}")
    } else {
        let sign = if minor < 0 { "-" } else { "" };
        format!(
            "{sign}{}.{:02} {code}",
            minor.abs() / 100,
            minor.abs() % 100
        )
    }
}

#[cfg(test)]
mod tests {
    use super::amount;

    #[test]
    fn amounts_show_in_their_currencys_units() {
        assert_eq!(amount(Some(2900), Some("eur")), "29.00 EUR");
        assert_eq!(amount(Some(120_005), Some("usd")), "1200.05 USD");
        assert_eq!(amount(Some(5000), Some("jpy")), "5000 JPY");
        assert_eq!(amount(None, Some("eur")), "-");
    }
}
