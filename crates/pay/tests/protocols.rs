//! Both providers' messages, signed the way each documents it, with test keys: genuine ones
//! are read; forged, stale, probing, misaddressed or tampered ones are refused.

use base64::Engine;
use pay::{PayError, alipay, keys, wechat};
use proptest::prelude::*;

const NOW: i64 = 1_795_000_000;
const API_V3_KEY: &str = "0123456789abcdef0123456789ABCDEF";

fn key(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/keys/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn merchant() -> wechat::Merchant {
    wechat::Merchant {
        mchid: "1900000109".into(),
        appid: "wxd678efh567hg6787".into(),
        serial_no: "5157F09EFDC096DE15EBE81A47057A7232F1B8E1".into(),
        key: keys::private_key(&key("merchant.key.pem")).unwrap(),
        api_v3_key: API_V3_KEY.into(),
    }
}

fn verifiers() -> wechat::Verifiers {
    let mut v = wechat::Verifiers::default();
    // The platform certificate and the public key of the same platform key, as in a migration.
    v.add(
        "7132D72A03E93CDDF8C03BBD1F37EEDF",
        keys::public_key(&key("wechatpay.cert.pem")).unwrap(),
    );
    v.add(
        "PUB_KEY_ID_0119000001092025112500000000000001",
        keys::public_key(&key("wechatpay.pub.pem")).unwrap(),
    );
    v
}

fn transaction(total: i64, state: &str, mchid: &str) -> String {
    serde_json::json!({
        "appid": "wxd678efh567hg6787", "mchid": mchid, "out_trade_no": "WJ1795000000000123456",
        "transaction_id": "4200000000202611250000000001", "trade_type": "NATIVE",
        "trade_state": state, "amount": {"total": total, "currency": "CNY", "payer_total": total},
    })
    .to_string()
}

/// A notification as WeChat Pay sends it: encrypted resource, signed body.
fn notification(plain: &str, serial: &str, timestamp: i64) -> (wechat::SignedHeaders, String) {
    let resource =
        wechat::encrypt(API_V3_KEY, "transaction", "fdasflkja484", plain.as_bytes()).unwrap();
    let body = serde_json::json!({
        "id": "EV-2018022511223320873", "create_time": "2026-11-25T20:10:00+08:00",
        "resource_type": "encrypt-resource", "event_type": "TRANSACTION.SUCCESS",
        "summary": "支付成功", "resource": resource,
    })
    .to_string();
    let platform = keys::private_key(&key("wechatpay.key.pem")).unwrap();
    let nonce = "5K8264ILTKCH16CQ2502SI8ZNMTM67VS";
    let headers = wechat::SignedHeaders {
        timestamp: timestamp.to_string(),
        nonce: nonce.into(),
        signature: wechat::sign_message(&platform, timestamp, nonce, &body),
        serial: serial.into(),
    };
    (headers, body)
}

#[test]
fn a_genuine_wechat_payment_notification_is_read_with_either_kind_of_key() {
    for serial in [
        "7132D72A03E93CDDF8C03BBD1F37EEDF",
        "PUB_KEY_ID_0119000001092025112500000000000001",
    ] {
        let (headers, body) = notification(&transaction(990, "SUCCESS", "1900000109"), serial, NOW);
        let paid = wechat::read_notification(
            &merchant(),
            &verifiers(),
            &headers,
            body.as_bytes(),
            NOW + 10,
        )
        .unwrap()
        .unwrap();
        assert_eq!(paid.event_id, "EV-2018022511223320873");
        assert_eq!(paid.out_trade_no, "WJ1795000000000123456");
        assert_eq!(paid.amount_fen, 990);
    }
    // Genuine but not a payment: acknowledged, nothing to do.
    let (headers, body) = notification(
        &transaction(990, "NOTPAY", "1900000109"),
        "7132D72A03E93CDDF8C03BBD1F37EEDF",
        NOW,
    );
    assert_eq!(
        wechat::read_notification(&merchant(), &verifiers(), &headers, body.as_bytes(), NOW),
        Ok(None)
    );
}

#[test]
fn a_refund_notification_says_which_refund_ended_how() {
    let refund = |mchid: &str, status: &str| {
        serde_json::json!({
            "mchid": mchid, "out_trade_no": "WJ1795000000000123456",
            "transaction_id": "4200000000202611250000000001", "out_refund_no": "RF123",
            "refund_id": "50000000382019052709732678859", "refund_status": status,
            "amount": {"total": 3000, "refund": 1000, "payer_total": 3000, "payer_refund": 1000},
        })
        .to_string()
    };
    let as_refund = |body: String| body.replace("TRANSACTION.SUCCESS", "REFUND.SUCCESS");
    let (headers, body) = notification(
        &refund("1900000109", "SUCCESS"),
        "PUB_KEY_ID_0119000001092025112500000000000001",
        NOW,
    );
    // The event type is signed too: the body is re-signed below with the platform key.
    let body = as_refund(body);
    let platform = keys::private_key(&key("wechatpay.key.pem")).unwrap();
    let headers = wechat::SignedHeaders {
        signature: wechat::sign_message(&platform, NOW, &headers.nonce, &body),
        ..headers
    };
    match wechat::read_any_notification(&merchant(), &verifiers(), &headers, body.as_bytes(), NOW) {
        Ok(Some(wechat::Notice::Refund(r))) => {
            assert_eq!((r.out_refund_no.as_str(), r.succeeded()), ("RF123", true));
        }
        other => panic!("{other:?}"),
    }
    // A refund is never read as a payment.
    assert_eq!(
        wechat::read_notification(&merchant(), &verifiers(), &headers, body.as_bytes(), NOW),
        Ok(None)
    );
    // Another merchant's refund is refused.
    let (headers, body) = notification(
        &refund("1900000999", "SUCCESS"),
        "PUB_KEY_ID_0119000001092025112500000000000001",
        NOW,
    );
    let body = as_refund(body);
    let headers = wechat::SignedHeaders {
        signature: wechat::sign_message(&platform, NOW, &headers.nonce, &body),
        ..headers
    };
    assert_eq!(
        wechat::read_any_notification(&merchant(), &verifiers(), &headers, body.as_bytes(), NOW),
        Err(PayError::WrongMerchant)
    );
}

#[test]
fn forged_stale_probing_and_misaddressed_wechat_notifications_are_refused() {
    let serial = "PUB_KEY_ID_0119000001092025112500000000000001";
    let read = |headers: &wechat::SignedHeaders, body: &str, now: i64| {
        wechat::read_notification(&merchant(), &verifiers(), headers, body.as_bytes(), now)
    };
    let (headers, body) = notification(&transaction(990, "SUCCESS", "1900000109"), serial, NOW);
    // Tampered body (another amount) under the genuine signature.
    let tampered = body.replacen("TRANSACTION.SUCCESS", "TRANSACTION.SUCCESS ", 1);
    assert_eq!(read(&headers, &tampered, NOW), Err(PayError::BadSignature));
    // Signed by someone else's key (our own merchant key, say).
    let mut forged = headers.clone();
    forged.signature = wechat::sign_message(&merchant().key, NOW, &headers.nonce, &body);
    assert_eq!(read(&forged, &body, NOW), Err(PayError::BadSignature));
    // Five minutes and a second away, either side.
    assert_eq!(
        read(&headers, &body, NOW + 301),
        Err(PayError::StaleTimestamp)
    );
    assert_eq!(
        read(&headers, &body, NOW - 301),
        Err(PayError::StaleTimestamp)
    );
    assert!(read(&headers, &body, NOW + 300).is_ok());
    // WeChat Pay's signature probe.
    let mut probe = headers.clone();
    probe.signature = format!("WECHATPAY/SIGNTEST/{}", headers.signature);
    assert_eq!(read(&probe, &body, NOW), Err(PayError::SignTest));
    // A serial we do not hold.
    let mut unknown = headers.clone();
    unknown.serial = "PUB_KEY_ID_999".into();
    assert!(matches!(
        read(&unknown, &body, NOW),
        Err(PayError::UnknownSerial(_))
    ));
    // Genuinely signed, but for another merchant.
    let (headers, body) = notification(&transaction(990, "SUCCESS", "1230000109"), serial, NOW);
    assert_eq!(read(&headers, &body, NOW), Err(PayError::WrongMerchant));
    // Encrypted with another APIv3 key.
    let mut other = merchant();
    other.api_v3_key = "ffffffffffffffffffffffffffffffff".into();
    let (headers, body) = notification(&transaction(990, "SUCCESS", "1900000109"), serial, NOW);
    assert_eq!(
        wechat::read_notification(&other, &verifiers(), &headers, body.as_bytes(), NOW),
        Err(PayError::Decrypt)
    );
}

#[test]
fn our_wechat_requests_carry_a_signature_the_merchant_key_verifies() {
    let m = merchant();
    let body = wechat::native_order_body(
        &m,
        &wechat::OrderTerms {
            description: "文鉴 查重 3 次",
            out_trade_no: "WJ1",
            amount_fen: 9900,
            notify_url: "https://example.cn/notify",
            time_expire_rfc3339: "2026-11-25T21:00:00+08:00",
        },
    );
    let header = wechat::authorization(
        &m,
        "POST",
        "/v3/pay/transactions/native",
        &body,
        NOW,
        "NONCE123",
    );
    assert!(
        header.starts_with("WECHATPAY2-SHA256-RSA2048 mchid=\"1900000109\",nonce_str=\"NONCE123\"")
    );
    let signature = header
        .split("signature=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let public = keys::public_key(&key("merchant.pub.pem")).unwrap();
    let signed = format!("POST\n/v3/pay/transactions/native\n{NOW}\nNONCE123\n{body}\n");
    assert_eq!(keys::verify(&public, signed.as_bytes(), signature), Ok(()));
    assert_eq!(
        keys::verify(&public, signed.replace("9900", "1").as_bytes(), signature),
        Err(PayError::BadSignature)
    );
}

fn app() -> alipay::App {
    alipay::App {
        app_id: "2021000000000001".into(),
        seller_id: Some("2088000000000001".into()),
        // The PKCS #1 form Alipay's older key tools print.
        key: keys::private_key(&key("app.pkcs1.pem")).unwrap(),
        alipay_public_key: keys::public_key(&key("alipay.pub.pem")).unwrap(),
    }
}

fn alipay_notify(total: &str, status: &str, app_id: &str) -> Vec<(String, String)> {
    let mut params: Vec<(String, String)> = [
        ("notify_time", "2026-11-25 20:10:00"),
        ("notify_type", "trade_status_sync"),
        ("notify_id", "ac05099524730693a8b330c5ecf72da9786"),
        ("app_id", app_id),
        ("charset", "utf-8"),
        ("version", "1.0"),
        ("trade_no", "2026112522001400000000000001"),
        ("out_trade_no", "WJ1795000000000123456"),
        ("trade_status", status),
        ("total_amount", total),
        ("seller_id", "2088000000000001"),
        ("subject", "文鉴 账户充值"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    alipay::sign_notify(
        &keys::private_key(&key("alipay.key.pem")).unwrap(),
        &mut params,
    );
    params
}

#[test]
fn a_genuine_alipay_notification_is_read_and_a_forged_one_refused() {
    let paid = alipay::read_notify(
        &app(),
        &alipay_notify("88.80", "TRADE_SUCCESS", "2021000000000001"),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        (paid.amount_fen, paid.event_id.as_str()),
        (8880, "ac05099524730693a8b330c5ecf72da9786")
    );
    assert_eq!(
        alipay::read_notify(
            &app(),
            &alipay_notify("88.80", "WAIT_BUYER_PAY", "2021000000000001")
        ),
        Ok(None)
    );
    // The amount changed after signing.
    let mut tampered = alipay_notify("88.80", "TRADE_SUCCESS", "2021000000000001");
    tampered
        .iter_mut()
        .find(|(k, _)| k == "total_amount")
        .unwrap()
        .1 = "0.01".into();
    assert_eq!(
        alipay::read_notify(&app(), &tampered),
        Err(PayError::BadSignature)
    );
    // Signed with our own key instead of Alipay's.
    let mut forged = alipay_notify("88.80", "TRADE_SUCCESS", "2021000000000001");
    forged.retain(|(k, _)| k != "sign" && k != "sign_type");
    alipay::sign_notify(&app().key, &mut forged);
    assert_eq!(
        alipay::read_notify(&app(), &forged),
        Err(PayError::BadSignature)
    );
    // Genuine, but for another application, or with an amount that is not exact.
    assert_eq!(
        alipay::read_notify(
            &app(),
            &alipay_notify("88.80", "TRADE_SUCCESS", "2021999999999999")
        ),
        Err(PayError::WrongMerchant)
    );
    assert!(matches!(
        alipay::read_notify(
            &app(),
            &alipay_notify("88.805", "TRADE_SUCCESS", "2021000000000001")
        ),
        Err(PayError::BadAmount(_))
    ));
    // No signature at all.
    let mut unsigned = alipay_notify("88.80", "TRADE_SUCCESS", "2021000000000001");
    unsigned.retain(|(k, _)| k != "sign");
    assert_eq!(
        alipay::read_notify(&app(), &unsigned),
        Err(PayError::BadSignature)
    );
}

#[test]
fn alipay_requests_and_answers_are_signed_both_ways() {
    let biz =
        serde_json::json!({"out_trade_no": "WJ1", "total_amount": "99.00", "subject": "查重 3 次"});
    let params = alipay::request_params(
        &app(),
        "alipay.trade.precreate",
        &biz,
        Some("https://example.cn/n"),
        "2026-11-25 20:10:00",
    );
    let app_public = keys::public_key(&key("app.pub.pem")).unwrap();
    assert_eq!(alipay::verify_request(&app_public, &params), Ok(()));
    let mut changed = params.clone();
    changed
        .iter_mut()
        .find(|(k, _)| k == "biz_content")
        .unwrap()
        .1 = biz.to_string().replace("99.00", "0.01");
    assert_eq!(
        alipay::verify_request(&app_public, &changed),
        Err(PayError::BadSignature)
    );

    let gateway = keys::private_key(&key("alipay.key.pem")).unwrap();
    let answer = serde_json::json!({"code": "10000", "msg": "Success", "out_trade_no": "WJ1", "qr_code": "https://qr.alipay.com/bax0"});
    let body = alipay::signed_response(&gateway, "alipay.trade.precreate", &answer);
    let read = alipay::read_response(&app(), "alipay.trade.precreate", &body).unwrap();
    assert_eq!(read["qr_code"], "https://qr.alipay.com/bax0");
    let forged = body.replace("bax0", "evil");
    assert_eq!(
        alipay::read_response(&app(), "alipay.trade.precreate", &forged),
        Err(PayError::BadSignature)
    );
}

#[test]
fn a_phone_payment_page_carries_signed_parameters_in_its_address() {
    let biz = serde_json::json!({"out_trade_no": "WJ2", "total_amount": "30.00", "subject": "账户充值 & 赠送", "product_code": "QUICK_WAP_WAY"});
    let url = alipay::page_pay_url(
        &app(),
        "https://openapi.alipay.com/gateway.do",
        "alipay.trade.wap.pay",
        &biz,
        "https://example.cn/api/order/notify/alipay",
        "https://example.cn/order/account?paid=WJ2",
        "2026-11-25 20:10:00",
    );
    let (gateway, query) = url.split_once('?').unwrap();
    assert_eq!(gateway, "https://openapi.alipay.com/gateway.do");
    // Read back as the gateway reads a query string, the signature holds and covers both URLs.
    let params: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let app_public = keys::public_key(&key("app.pub.pem")).unwrap();
    assert_eq!(alipay::verify_request(&app_public, &params), Ok(()));
    let value = |name: &str| params.iter().find(|(k, _)| k == name).unwrap().1.clone();
    assert_eq!(
        value("return_url"),
        "https://example.cn/order/account?paid=WJ2"
    );
    assert_eq!(value("method"), "alipay.trade.wap.pay");
    assert!(value("biz_content").contains("账户充值 & 赠送"));
    let mut redirected = params.clone();
    redirected
        .iter_mut()
        .find(|(k, _)| k == "return_url")
        .unwrap()
        .1 = "https://evil.cn".into();
    assert_eq!(
        alipay::verify_request(&app_public, &redirected),
        Err(PayError::BadSignature)
    );
}

#[test]
fn a_platform_certificate_is_known_by_its_serial_number() {
    assert_eq!(
        keys::certificate_serial(&key("wechatpay.cert.pem")).unwrap(),
        "48A1B06318B9281190A454AFAA881DFB76130737"
    );
    assert!(matches!(
        keys::certificate_serial(&key("wechatpay.pub.pem")),
        Err(PayError::BadKey(_))
    ));
}

#[test]
fn an_h5_order_names_the_payer_address_and_the_page_kind() {
    let body = wechat::h5_order_body(
        &merchant(),
        &wechat::OrderTerms {
            description: "账户充值",
            out_trade_no: "WJ3",
            amount_fen: 3000,
            notify_url: "https://example.cn/api/order/notify/wechat",
            time_expire_rfc3339: "2026-11-25T21:00:00+08:00",
        },
        "203.0.113.7",
    );
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["scene_info"]["payer_client_ip"], "203.0.113.7");
    assert_eq!(body["scene_info"]["h5_info"]["type"], "Wap");
    assert_eq!(body["amount"]["total"], 3000);
    assert_eq!(body["mchid"], "1900000109");
}

#[test]
fn keys_are_read_in_every_form_providers_hand_out() {
    let pem = key("app.key.pem");
    let bare: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let a = keys::private_key(&pem).unwrap();
    assert_eq!(keys::private_key(&bare).unwrap(), a);
    assert_eq!(keys::private_key(&key("app.pkcs1.pem")).unwrap(), a);
    let public = key("wechatpay.pub.pem");
    let bare_public: String = public.lines().filter(|l| !l.starts_with("-----")).collect();
    assert_eq!(
        keys::public_key(&bare_public).unwrap(),
        keys::public_key(&key("wechatpay.cert.pem")).unwrap()
    );
    for bad in [
        "",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
        "not a key",
    ] {
        assert!(matches!(keys::private_key(bad), Err(PayError::BadKey(_))));
        assert!(matches!(keys::public_key(bad), Err(PayError::BadKey(_))));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random bodies, headers and form fields are refused without a panic.
    #[test]
    fn random_messages_are_refused(body in proptest::collection::vec(any::<u8>(), 0..400),
                                   signature in "[A-Za-z0-9+/=]{0,400}",
                                   timestamp in "[0-9]{0,12}",
                                   fields in proptest::collection::vec(("[a-z_]{1,12}", ".{0,30}"), 0..12)) {
        let headers = wechat::SignedHeaders {
            timestamp: timestamp.clone(),
            nonce: "n".into(),
            signature: signature.clone(),
            serial: "PUB_KEY_ID_0119000001092025112500000000000001".into(),
        };
        prop_assert!(wechat::read_notification(&merchant(), &verifiers(), &headers, &body, NOW).is_err());
        let mut params = fields.clone();
        params.push(("sign".into(), signature.clone()));
        prop_assert!(alipay::read_notify(&app(), &params).is_err());
        let resource = wechat::Resource {
            algorithm: "AEAD_AES_256_GCM".into(),
            ciphertext: base64::engine::general_purpose::STANDARD.encode(&body),
            associated_data: String::new(),
            nonce: "fdasflkja484".into(),
            original_type: String::new(),
        };
        prop_assert!(wechat::decrypt(API_V3_KEY, &resource).is_err());
        let _ = keys::public_key(&String::from_utf8_lossy(&body));
    }
}
