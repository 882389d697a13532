//! What everything costs now: the configuration file's prices, or the operator's from the
//! console (kept in the database, so every API node sees a change with its next quote, no
//! restart). Every price shown and charged is read through `Prices::current`.

use crate::config::{Config, PriceTier, TopUpTier};
use crate::envelope::ApiError;
use crate::state::AppState;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Where the operator's prices are kept (`config_entries`).
pub const ENTITY: &str = "prices";
pub const ID: &str = "current";

/// The services priced per started 1,000 characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerThousand {
    Check,
    Aigc,
    Rewrite,
    Chat,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Prices {
    /// 论文查重, per started 1,000 characters, in fen.
    pub check_fen_per_thousand: i64,
    /// AIGC检测, per started 1,000 characters.
    pub aigc_fen_per_thousand: i64,
    /// 降重 / 降AIGC, per started 1,000 characters rewritten.
    pub rewrite_fen_per_thousand: i64,
    /// 对话改写, per started 1,000 characters sent.
    pub chat_fen_per_thousand: i64,
    /// One defence deck.
    pub ppt_fen: i64,
    /// 论文生成 by length: a paper pays the first tier at least as long as asked.
    pub paper_tiers: Vec<PriceTier>,
    /// Top-up amounts offered with their bonuses (充100送20).
    pub top_up_tiers: Vec<TopUpTier>,
}

/// Bounds that catch a slip of the finger (a price in yuan typed as fen, or the reverse).
const MAX_PER_THOUSAND_FEN: i64 = 100_000;
const MAX_TASK_FEN: i64 = 1_000_000;
const MAX_TIERS: usize = 12;
/// The lengths the generator writes.
const PAPER_WORDS: std::ops::RangeInclusive<u32> =
    compose::outline::MIN_WORDS..=compose::outline::MAX_WORDS;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_prices", message)
}

impl Prices {
    pub fn of_config(c: &Config) -> Prices {
        Prices {
            check_fen_per_thousand: c.check_price_fen_per_thousand,
            aigc_fen_per_thousand: c.aigc_price_fen_per_thousand,
            rewrite_fen_per_thousand: c.rewrite_price_fen_per_thousand,
            chat_fen_per_thousand: c.chat_price_fen_per_thousand,
            ppt_fen: c.ppt_price_fen,
            paper_tiers: c.paper_price_tiers.clone(),
            top_up_tiers: c.top_up_tiers.clone(),
        }
    }

    /// The operator's prices when set, else the configuration file's.
    pub async fn current(state: &AppState) -> Result<Prices, ApiError> {
        Ok(Prices::overridden(state)
            .await?
            .unwrap_or_else(|| Prices::of_config(&state.config)))
    }

    /// The operator's prices, when they set any. Prices kept that cannot be read (a row written
    /// by another version) quote nothing rather than the file's prices: 503 until an operator
    /// saves them again.
    pub async fn overridden(state: &AppState) -> Result<Option<Prices>, ApiError> {
        match state.store.config_entry(ENTITY, ID).await {
            Ok(entry) => match serde_json::from_str(&entry.value) {
                Ok(prices) => Ok(Some(prices)),
                Err(e) => {
                    tracing::error!(error = %e, "the operator's prices cannot be read");
                    Err(ApiError::new(
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        "prices_unreadable",
                        "价格设置无法读取，暂停报价；请管理员在运营后台重新保存价格",
                    ))
                }
            },
            Err(store::StoreError::NotFound) => Ok(None),
            Err(other) => Err(other.into()),
        }
    }

    pub fn per_thousand(&self, service: PerThousand) -> i64 {
        match service {
            PerThousand::Check => self.check_fen_per_thousand,
            PerThousand::Aigc => self.aigc_fen_per_thousand,
            PerThousand::Rewrite => self.rewrite_fen_per_thousand,
            PerThousand::Chat => self.chat_fen_per_thousand,
        }
    }

    /// The prices as an operator may set them: every price at least one fen and within bounds,
    /// paper tiers by length without repeats, top-ups within the configured limits and their
    /// bonuses no larger than the amount. Tiers come back sorted.
    pub fn validated(mut self, config: &Config) -> Result<Prices, ApiError> {
        for (name, fen) in [
            ("论文查重", self.check_fen_per_thousand),
            ("AIGC检测", self.aigc_fen_per_thousand),
            ("降重 / 降AIGC", self.rewrite_fen_per_thousand),
            ("对话改写", self.chat_fen_per_thousand),
        ] {
            if !(1..=MAX_PER_THOUSAND_FEN).contains(&fen) {
                return Err(invalid(format!(
                    "{name}的价格须在每千字 0.01 元到 1000 元之间"
                )));
            }
        }
        if !(1..=MAX_TASK_FEN).contains(&self.ppt_fen) {
            return Err(invalid("答辩PPT的价格须在 0.01 元到 10000 元之间"));
        }
        if self.paper_tiers.is_empty() || self.paper_tiers.len() > MAX_TIERS {
            return Err(invalid(format!(
                "论文生成须有 1–{MAX_TIERS} 档按字数的价格"
            )));
        }
        self.paper_tiers.sort_by_key(|t| t.words);
        for (i, tier) in self.paper_tiers.iter().enumerate() {
            if !PAPER_WORDS.contains(&tier.words) {
                return Err(invalid(format!(
                    "论文生成每档的字数须在 {}–{} 之间",
                    PAPER_WORDS.start(),
                    PAPER_WORDS.end()
                )));
            }
            if !(1..=MAX_TASK_FEN).contains(&tier.fen) {
                return Err(invalid("论文生成每档的价格须在 0.01 元到 10000 元之间"));
            }
            if i > 0 && self.paper_tiers[i - 1].words == tier.words {
                return Err(invalid(format!("论文生成有两档都是 {} 字", tier.words)));
            }
        }
        // A paper longer than the longest tier would pay that tier's price.
        if self.paper_tiers.last().map(|t| t.words) != Some(*PAPER_WORDS.end()) {
            return Err(invalid(format!(
                "论文生成最长一档须为 {} 字，任何篇幅都要有它的价格",
                PAPER_WORDS.end()
            )));
        }
        if self.top_up_tiers.len() > MAX_TIERS {
            return Err(invalid(format!("充值档位至多 {MAX_TIERS} 个")));
        }
        self.top_up_tiers.sort_by_key(|t| t.fen);
        for (i, tier) in self.top_up_tiers.iter().enumerate() {
            if !(config.top_up_min_fen..=config.top_up_max_fen).contains(&tier.fen) {
                return Err(invalid(format!(
                    "充值金额须在 {:.2} 元到 {:.2} 元之间",
                    config.top_up_min_fen as f64 / 100.0,
                    config.top_up_max_fen as f64 / 100.0
                )));
            }
            if !(0..=tier.fen).contains(&tier.bonus_fen) {
                return Err(invalid("充值赠送不能为负，也不能超过充值金额本身"));
            }
            if i > 0 && self.top_up_tiers[i - 1].fen == tier.fen {
                return Err(invalid("有两个相同金额的充值档位"));
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configured_prices_pass_their_own_checks() {
        let config = Config::default();
        let prices = Prices::of_config(&config);
        assert_eq!(prices.clone().validated(&config).unwrap(), prices);
    }

    #[test]
    fn slips_are_refused() {
        let config = Config::default();
        let good = Prices::of_config(&config);
        let refused = |change: &dyn Fn(&mut Prices)| {
            let mut p = good.clone();
            change(&mut p);
            p.validated(&config).is_err()
        };
        assert!(refused(&|p| p.check_fen_per_thousand = -1));
        assert!(refused(&|p| p.aigc_fen_per_thousand = 0));
        assert!(refused(&|p| p.ppt_fen = MAX_TASK_FEN + 1));
        assert!(refused(&|p| p.paper_tiers.clear()));
        assert!(refused(&|p| {
            let first = p.paper_tiers[0].clone();
            p.paper_tiers.push(first)
        }));
        assert!(refused(&|p| p.top_up_tiers.push(TopUpTier {
            fen: 10_000,
            bonus_fen: 10_001
        })));
        assert!(refused(&|p| p.top_up_tiers.push(TopUpTier {
            fen: 1,
            bonus_fen: 0
        })));
        // Tiers typed out of order are kept in order.
        let mut shuffled = good.clone();
        shuffled.paper_tiers.reverse();
        shuffled.top_up_tiers.reverse();
        assert_eq!(shuffled.validated(&config).unwrap(), good);
    }
}
